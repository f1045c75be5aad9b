use super::*;

#[test]
fn a_lease_expires_only_after_its_revision_stood_still_for_the_timeout() {
    let mut watch = LeaseWatch::default();
    let t0 = Instant::now();
    let timeout = Duration::from_millis(5_000);
    assert!(!watch.expired("lease.a", 3, t0, timeout));
    assert!(!watch.expired("lease.a", 3, t0 + Duration::from_millis(4_999), timeout));
    assert!(watch.expired("lease.a", 3, t0 + Duration::from_millis(5_000), timeout));
}

#[test]
fn a_renewal_restarts_the_clock() {
    let mut watch = LeaseWatch::default();
    let t0 = Instant::now();
    let timeout = Duration::from_millis(1_000);
    assert!(!watch.expired("lease.a", 3, t0, timeout));
    // Renewed at 900 ms: a new revision, seen for the first time.
    assert!(!watch.expired("lease.a", 4, t0 + Duration::from_millis(900), timeout));
    assert!(!watch.expired("lease.a", 4, t0 + Duration::from_millis(1_500), timeout));
    assert!(watch.expired("lease.a", 4, t0 + Duration::from_millis(1_900), timeout));
}

#[test]
fn keys_are_watched_apart_and_gone_keys_forgotten() {
    let mut watch = LeaseWatch::default();
    let t0 = Instant::now();
    let timeout = Duration::from_millis(10);
    assert!(!watch.expired("lease.a", 1, t0, timeout));
    assert!(!watch.expired("lease.b", 1, t0 + Duration::from_millis(20), timeout));
    assert!(watch.expired("lease.a", 1, t0 + Duration::from_millis(20), timeout));
    watch.retain(&["lease.b".to_string()].into_iter().collect());
    // `a` came back (a new thread with the same key): its clock starts again.
    assert!(!watch.expired("lease.a", 1, t0 + Duration::from_millis(40), timeout));
}
