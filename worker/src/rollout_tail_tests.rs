use super::*;
use std::io::Write;

#[test]
fn whole_lines_come_once_and_a_half_written_line_waits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rollout.jsonl");
    let mut tail = RolloutTail::new(path.clone());
    assert!(tail.read_new_lines().unwrap().is_empty(), "no file yet");
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(b"{\"a\":1}\n{\"b\":").unwrap();
    assert_eq!(tail.read_new_lines().unwrap(), vec!["{\"a\":1}"]);
    assert!(tail.read_new_lines().unwrap().is_empty());
    file.write_all(b"2}\n{\"c\":3}\n").unwrap();
    assert_eq!(
        tail.read_new_lines().unwrap(),
        vec!["{\"b\":2}", "{\"c\":3}"]
    );
    assert!(tail.read_new_lines().unwrap().is_empty());
}
