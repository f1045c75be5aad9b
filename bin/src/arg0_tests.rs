use super::*;

fn run_with(args: &[&str], stdin: &str) -> (u8, String, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let args = args.iter().map(OsString::from).collect();
    let code = run(args, &mut stdin.as_bytes(), &mut out, &mut err);
    (
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

#[test]
fn usage_errors_exit_2() {
    let (code, _, err) = run_with(&[], "");
    assert_eq!(code, 2);
    assert!(err.starts_with("Usage: apply_patch 'PATCH'"), "{err}");
    let (code, _, err) = run_with(&["a", "b"], "");
    assert_eq!(code, 2);
    assert_eq!(err, "Error: apply_patch accepts exactly one argument.\n");
}

#[test]
fn bad_patch_exits_1_with_codex_message() {
    let (code, out, err) = run_with(&["garbage"], "");
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(
        err,
        "Invalid patch: The first line of the patch must be '*** Begin Patch'\n"
    );
}
