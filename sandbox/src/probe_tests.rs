use super::{trampoline_for, HELPER_BINARY};
use std::path::PathBuf;

#[test]
fn the_small_helper_beside_the_binary_is_the_trampoline() {
    let exe = PathBuf::from("/opt/bin/troupe");
    assert_eq!(
        trampoline_for(exe, true, true),
        Some(PathBuf::from("/opt/bin").join(HELPER_BINARY))
    );
}

#[test]
fn a_renamed_troupe_without_the_helper_is_its_own_trampoline() {
    // Installed as `troupe-1.2` (or copied elsewhere) without `troupe-sandbox` beside it:
    // its main still dispatches the trampoline argument, so commands need no fork.
    let exe = PathBuf::from("/usr/local/bin/troupe-1.2");
    assert_eq!(trampoline_for(exe.clone(), false, true), Some(exe));
}

#[test]
fn a_binary_that_does_not_run_the_helpers_forks() {
    let exe = PathBuf::from("/tmp/target/debug/deps/troupe_sandbox-0123");
    assert_eq!(trampoline_for(exe, false, false), None);
}
