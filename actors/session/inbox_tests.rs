use super::*;

fn thread() -> ThreadId {
    ThreadId::new()
}

#[test]
fn messages_are_claimed_once_in_order() {
    let home = tempfile::tempdir().unwrap();
    let id = thread();
    enqueue(home.path(), id, "first").unwrap();
    enqueue(home.path(), id, "second").unwrap();
    let dir = inbox_dir(home.path(), id);
    let claimed = claim_all(&dir);
    let texts: Vec<&str> = claimed.iter().filter_map(|c| c.text()).collect();
    assert_eq!(texts, ["first", "second"]);
    // Taken: a second reader finds nothing.
    assert!(claim_all(&dir).is_empty());
    // Given back: claimable again, same order.
    unclaim(&claimed.iter().map(|c| c.path.clone()).collect::<Vec<_>>());
    let again = claim_all(&dir);
    assert_eq!(again.len(), 2);
    remove(&again.iter().map(|c| c.path.clone()).collect::<Vec<_>>());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn a_dead_process_claim_is_taken_over_and_junk_is_set_aside() {
    let home = tempfile::tempdir().unwrap();
    let id = thread();
    enqueue(home.path(), id, "orphan").unwrap();
    let dir = inbox_dir(home.path(), id);
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // A pid that cannot be alive (above the kernel's maximum).
    let dead = file.with_file_name(format!(
        "{}{CLAIMED}{}",
        file.file_name().unwrap().to_str().unwrap(),
        u32::MAX - 1
    ));
    std::fs::rename(&file, &dead).unwrap();
    std::fs::write(dir.join("0000000000000-junk.json"), "{not json").unwrap();
    std::fs::write(dir.join(".half-written.json.tmp"), "{").unwrap();
    let claimed = claim_all(&dir);
    let texts: Vec<&str> = claimed.iter().filter_map(|c| c.text()).collect();
    assert_eq!(texts, ["orphan"]);
    assert!(dir.join("0000000000000-junk.json.bad").exists());
    assert!(dir.join(".half-written.json.tmp").exists());
}

#[test]
fn empty_and_oversized_messages_are_refused() {
    let home = tempfile::tempdir().unwrap();
    assert!(matches!(
        enqueue(home.path(), thread(), "  \n"),
        Err(InboxError::Empty)
    ));
    let big = "x".repeat(MAX_MESSAGE_BYTES + 1);
    assert!(matches!(
        enqueue(home.path(), thread(), &big),
        Err(InboxError::TooLarge(_))
    ));
    assert!(claim_all(&home.path().join("queue").join("nothing")).is_empty());
}

#[test]
fn typed_ops_round_trip_and_old_messages_still_read() {
    let home = tempfile::tempdir().unwrap();
    let id = thread();
    let approval = QueuedOp::ExecApproval {
        call_id: "c1".into(),
        decision: troupe_messages::ops::ReviewDecision::Approved,
    };
    enqueue(home.path(), id, "steer me").unwrap();
    enqueue_op(home.path(), id, approval.clone()).unwrap();
    let dir = inbox_dir(home.path(), id);
    // A message as `troupe queue` wrote it before ops existed.
    std::fs::write(
        dir.join("9999999999999-old.json"),
        r#"{"id":"old","text":"from before","queued_at_ms":9999999999999}"#,
    )
    .unwrap();
    let ops: Vec<QueuedOp> = claim_all(&dir).into_iter().map(|c| c.op).collect();
    assert_eq!(
        ops,
        [
            QueuedOp::Steer {
                text: "steer me".into()
            },
            approval,
            QueuedOp::Steer {
                text: "from before".into()
            },
        ]
    );
}
