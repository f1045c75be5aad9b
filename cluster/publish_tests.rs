use super::*;

#[test]
fn a_payload_that_fits_is_one_message_without_a_part_number() {
    assert_eq!(split(b"abc".to_vec(), 3), vec![(b"abc".to_vec(), None)]);
}

#[test]
fn a_larger_payload_is_numbered_parts_that_join_back_to_it() {
    let parts = split(b"abcdefg".to_vec(), 3);
    assert_eq!(
        parts,
        vec![
            (b"abc".to_vec(), Some((1, 3))),
            (b"def".to_vec(), Some((2, 3))),
            (b"g".to_vec(), Some((3, 3))),
        ]
    );
}
