use super::Placement;
use crate::containment::Containment;
use crate::spawn_trampoline::parse_with;
use std::ffi::OsString;

fn args(list: &[&str]) -> Vec<OsString> {
    list.iter().map(OsString::from).collect()
}

#[test]
fn placements_round_trip_through_their_argument() {
    for placement in [
        Placement::Keep,
        Placement::Contain(Containment::Group),
        Placement::Contain(Containment::Session),
    ] {
        assert_eq!(Placement::from_arg(placement.as_arg()), Some(placement));
    }
    assert_eq!(Placement::from_arg("nowhere"), None);
}

#[test]
fn the_supervisor_reads_keep_where_the_trampoline_reads_a_containment() {
    let parsed = parse_with(
        &args(&["42", "keep", "--", "/bin/sh", "sh", "-c", "true"]),
        Placement::from_arg,
        String::new,
    )
    .unwrap();
    assert_eq!(parsed.0, 42);
    assert_eq!(parsed.1, Placement::Keep);
    assert_eq!(parsed.2.to_str().unwrap(), "/bin/sh");
    assert_eq!(parsed.3.len(), 3);
    assert!(parse_with(
        &args(&["42", "keep", "/bin/sh", "sh"]),
        Placement::from_arg,
        || "usage".to_string()
    )
    .is_err());
}
