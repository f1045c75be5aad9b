use super::{command_key, ApprovalCache, ApprovalKey};
use std::path::PathBuf;

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(std::string::ToString::to_string).collect()
}

#[test]
fn command_keys_are_exact_argv_and_shell_wrappers_collapse() {
    let mut cache = ApprovalCache::default();
    let key = command_key(&argv(&["cargo", "build"]));
    assert!(!cache.all_approved(std::slice::from_ref(&key)));
    cache.approve(std::slice::from_ref(&key));
    assert!(cache.all_approved(&[key]));
    assert!(!cache.all_approved(&[command_key(&argv(&["cargo", "build", "--release"]))]));
    cache.approve(&[command_key(&argv(&["bash", "-lc", "make test"]))]);
    assert!(cache.all_approved(&[command_key(&argv(&["sh", "-c", "make test "]))]));
    assert!(!cache.all_approved(&[command_key(&argv(&["make", "test", "x"]))]));
}

#[test]
fn patch_is_skipped_only_when_every_file_is_approved() {
    let a = ApprovalKey::PatchFile(PathBuf::from("/w/src/a.ts"));
    let b = ApprovalKey::PatchFile(PathBuf::from("/w/src/b.ts"));
    let c = ApprovalKey::PatchFile(PathBuf::from("/w/src/c.ts"));
    let mut cache = ApprovalCache::default();
    cache.approve(&[a.clone(), b.clone()]);
    assert!(cache.all_approved(std::slice::from_ref(&a)));
    assert!(cache.all_approved(&[a.clone(), b.clone()]));
    assert!(!cache.all_approved(&[a.clone(), c.clone()]));
    assert!(!cache.all_approved(std::slice::from_ref(&c)));
    // No keys never counts as approved.
    assert!(!cache.all_approved(&[]));
    cache.approve(std::slice::from_ref(&c));
    assert!(cache.all_approved(&[a, b, c]));
}
