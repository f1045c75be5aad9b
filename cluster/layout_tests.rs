use super::*;

#[test]
fn subjects_and_streams_are_namespaced_by_pool() {
    let layout = Layout::new("build-farm_2").unwrap();
    assert_eq!(layout.spawn_subject(), "troupe.build-farm_2.spawn");
    assert_eq!(layout.spawn_stream(), "TROUPE_build-farm_2_SPAWN");
    assert_eq!(layout.threads_stream(), "TROUPE_build-farm_2_THREADS");
    assert_eq!(
        layout.threads_wildcard(),
        "troupe.build-farm_2.thread.*.events"
    );
    assert_eq!(
        layout.events_subject("0190-ab").unwrap(),
        "troupe.build-farm_2.thread.0190-ab.events"
    );
    assert_eq!(
        layout.ops_subject("0190-ab").unwrap(),
        "troupe.build-farm_2.thread.0190-ab.ops"
    );
    assert_eq!(layout.bucket(), "TROUPE_build-farm_2");
    assert_eq!(lease_key("t1"), "lease.t1");
    assert_eq!(worker_key("w1"), "worker.w1");
    assert_eq!(spawn_key("r1"), "spawn.r1");
}

#[test]
fn a_pool_name_that_could_escape_its_namespace_is_refused() {
    for bad in ["", "a.b", "a*", ">", "a b", "é", &"x".repeat(65)] {
        let err = Layout::new(bad).unwrap_err().to_string();
        assert!(err.contains("pool"), "{bad}: {err}");
    }
}

#[test]
fn an_id_with_wildcards_or_dots_is_refused_in_subjects() {
    let layout = Layout::new("p").unwrap();
    for bad in ["*", ">", "a.b", "", "a b"] {
        assert!(layout.events_subject(bad).is_err(), "{bad}");
        assert!(layout.ops_subject(bad).is_err(), "{bad}");
    }
}
