use crate::{load_file, parse_rules, RuleDecision, Rules, RulesError};
use pretty_assertions::assert_eq;

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(std::string::ToString::to_string).collect()
}

const SAMPLE: &str = r#"
prefix_rule(
    pattern = ["git", ["push", "fetch"]],
    decision = "prompt",
    justification = "talks to the network",
    match = [["git", "push", "origin"], "git fetch --all"],
    not_match = ["git status"],
)
prefix_rule(pattern = ["git"], decision = "allow")
prefix_rule(pattern = ["rm", "-rf"], decision = "forbidden", justification = "no mass deletes")
"#;

#[test]
fn strictest_matching_rule_wins() {
    let rules = parse_rules("sample.rules", SAMPLE).unwrap();
    assert_eq!(rules.rules.len(), 3);
    assert_eq!(
        rules.evaluate(&argv(&["git", "push", "origin"])),
        Some((RuleDecision::Prompt, Some("talks to the network".into())))
    );
    assert_eq!(
        rules.evaluate(&argv(&["git", "status"])),
        Some((RuleDecision::Allow, None))
    );
    assert_eq!(rules.evaluate(&argv(&["rm", "-r"])), None);
    assert_eq!(rules.evaluate(&argv(&["gi"])), None);
}

fn verdict(
    rules: &Rules,
    commands: &[Vec<String>],
    wrapped: &[Vec<String>],
    plain: bool,
) -> Option<RuleDecision> {
    let known_safe = |argv: &[String]| argv.first().is_some_and(|p| p == "ls");
    rules
        .evaluate_command(commands, wrapped, plain, known_safe)
        .map(|v| v.0)
}

#[test]
fn a_command_is_allowed_only_when_every_part_is_covered() {
    let rules = parse_rules("sample.rules", SAMPLE).unwrap();
    let git = argv(&["git", "status"]);
    let rm = argv(&["rm", "-rf", "/"]);
    let touch = argv(&["touch", "x"]);
    let ls = argv(&["ls"]);
    // The forbidden part dominates the allowed one, plain or not, found anywhere.
    assert_eq!(
        verdict(&rules, &[git.clone(), rm.clone()], &[], true),
        Some(RuleDecision::Forbidden)
    );
    assert_eq!(
        verdict(
            &rules,
            std::slice::from_ref(&git),
            std::slice::from_ref(&rm),
            false
        ),
        Some(RuleDecision::Forbidden)
    );
    // By base name too: `/bin/rm -rf` is `rm -rf`.
    assert_eq!(
        verdict(&rules, &[argv(&["/bin/rm", "-rf", "x"])], &[], true),
        Some(RuleDecision::Forbidden)
    );
    // Allow needs every part: an unmatched, unsafe part voids it.
    assert_eq!(
        verdict(&rules, std::slice::from_ref(&git), &[], true),
        Some(RuleDecision::Allow)
    );
    assert_eq!(verdict(&rules, &[git.clone(), touch], &[], true), None);
    // A known-safe part does not void it, but cannot make an allow alone.
    assert_eq!(
        verdict(&rules, &[git.clone(), ls.clone()], &[], true),
        Some(RuleDecision::Allow)
    );
    assert_eq!(verdict(&rules, &[ls], &[], true), None);
    // Not plain (redirections, substitutions…): never allow.
    assert_eq!(
        verdict(&rules, std::slice::from_ref(&git), &[], false),
        None
    );
    // Allow rules match the program word exactly: `./git` is not `git`.
    assert_eq!(
        verdict(&rules, &[argv(&["./git", "status"])], &[], true),
        None
    );
}

#[test]
fn default_decision_is_allow_and_pattern_must_not_be_empty() {
    let rules = parse_rules("a.rules", "prefix_rule(pattern=[\"ls\"])").unwrap();
    assert_eq!(rules.rules[0].decision, RuleDecision::Allow);
    let err = parse_rules("b.rules", "prefix_rule(pattern=[])").unwrap_err();
    assert!(err.to_string().contains("pattern cannot be empty"), "{err}");
    let err = parse_rules(
        "c.rules",
        "prefix_rule(pattern=[\"ls\"], decision=\"maybe\")",
    )
    .unwrap_err();
    assert!(err.to_string().contains("decision must be"), "{err}");
}

#[test]
fn syntax_error_names_file_and_line() {
    let err = parse_rules("bad.rules", "\n\nprefix_rule(pattern=[\"ls\"]\n").unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, RulesError::Starlark(_)));
    assert!(text.contains("bad.rules:"), "{text}");
}

#[test]
fn failing_examples_are_errors_with_location() {
    let text = "prefix_rule(pattern=[\"ls\"])\n\nprefix_rule(\n  pattern=[\"git\", \"push\"],\n  match=[\"git pull\"],\n)\n";
    let err = parse_rules("ex.rules", text).unwrap_err();
    match &err {
        RulesError::Example { location, message } => {
            assert_eq!(location, "ex.rules:3");
            assert!(message.contains("does not match"), "{message}");
        }
        other => panic!("unexpected {other:?}"),
    }
    let err = parse_rules(
        "nm.rules",
        "prefix_rule(pattern=[\"git\"], not_match=[[\"git\", \"x\"]])",
    )
    .unwrap_err();
    assert!(err.to_string().contains("nm.rules:1"), "{err}");
    assert!(err.to_string().contains("`not_match`"), "{err}");
}

#[test]
fn loads_rules_files_from_directories_in_name_order() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.rules"), "prefix_rule(pattern=[\"b\"])").unwrap();
    std::fs::write(dir.path().join("a.rules"), "prefix_rule(pattern=[\"a\"])").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not starlark").unwrap();
    let missing = dir.path().join("missing");
    let rules = crate::load::load_dirs_blocking(&[missing, dir.path().to_path_buf()]).unwrap();
    let firsts: Vec<&str> = rules
        .rules
        .iter()
        .map(|r| r.pattern[0][0].as_str())
        .collect();
    assert_eq!(firsts, ["a", "b"]);
    assert!(load_file(&dir.path().join("nope.rules")).is_err());
}

#[test]
fn hostile_rules_files_fail_with_the_file_named() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        (
            "loop.rules",
            "def f():\n    x = 0\n    for i in range(1000000000):\n        x = i\nf()\n",
        ),
        ("recurse.rules", "def f(n):\n    return f(n + 1)\nf(0)\n"),
        (
            "nested.rules",
            "def f():\n    x = []\n    for i in range(100000):\n        x = [x]\n    return x == x\nf()\n",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let started = std::time::Instant::now();
        let err = load_file(&path).unwrap_err().to_string();
        assert!(err.contains(name), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        eprintln!("{name}: {}", &err[..err.len().min(300)]);
    }
}

#[test]
fn nesting_that_would_overflow_the_parser_is_refused_first() {
    let dir = tempfile::tempdir().unwrap();
    let blocks: String = (0..300)
        .map(|i| format!("{}if True:\n", " ".repeat(i)))
        .collect();
    for (name, text, why) in [
        (
            "deep.rules",
            format!("x = {}{}\n", "[".repeat(100_000), "]".repeat(100_000)),
            "brackets nested deeper",
        ),
        (
            "chain.rules",
            format!("x = 1{}\n", "+1".repeat(200_000)),
            "1000 operators",
        ),
        (
            "nots.rules",
            format!("x = {}True\n", "not ".repeat(200_000)),
            "1000 operators",
        ),
        (
            "index.rules",
            format!("x = [0]{}\n", "[0]".repeat(200_000)),
            "1000 operators",
        ),
        ("blocks.rules", blocks, "indented deeper"),
        (
            "elifs.rules",
            format!(
                "if False:\n    pass\n{}",
                "elif False:\n    pass\n".repeat(2000)
            ),
            "1000 `elif`",
        ),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let err = load_file(&path).unwrap_err().to_string();
        assert!(err.contains(name) && err.contains(why), "{err}");
    }
    // Strings and comments do not count, and a file within the limits loads.
    let fine = dir.path().join("fine.rules");
    let text = format!(
        "# ((((( {}\nx = 1{}\nprefix_rule(pattern=[\"a\"], justification=\"[[[ {}\")\n",
        "(".repeat(500),
        "+1".repeat(900),
        "+".repeat(5000)
    );
    std::fs::write(&fine, text).unwrap();
    assert_eq!(load_file(&fine).unwrap().rules.len(), 1);
    // Right under the limits, the evaluator's stack holds.
    let nested_blocks: String = (0..150)
        .map(|i| format!("{}if True:\n", " ".repeat(i)))
        .chain(std::iter::once(format!("{}pass\n", " ".repeat(150))))
        .collect();
    for text in [
        format!("x = \"a\"{}\n", "[0]".repeat(990)),
        format!("x = {}True\n", "not ".repeat(990)),
        format!("x = 1{}\n", "+1".repeat(990)),
        format!("x = {}1{}\n", "(".repeat(100), ")".repeat(100)),
        format!(
            "if False:\n    pass\n{}",
            "elif False:\n    pass\n".repeat(1000)
        ),
        nested_blocks,
    ] {
        std::fs::write(&fine, &text).unwrap();
        assert!(load_file(&fine).is_ok(), "{}", &text[..40]);
    }
}

#[test]
fn a_builtin_that_never_returns_hits_the_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spin.rules");
    // One statement: the step budget cannot see inside the builtin, the clock can.
    std::fs::write(&path, "x = max(range(2147483647))\n").unwrap();
    let err = load_file(&path).unwrap_err().to_string();
    assert!(err.contains("spin.rules"), "{err}");
    assert!(err.contains("did not finish"), "{err}");
}

#[test]
fn only_regular_files_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.rules");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    std::fs::create_dir(dir.path().join("dir.rules")).unwrap();
    std::fs::write(
        dir.path().join("big.rules"),
        "#".repeat(crate::load::MAX_RULES_FILE_BYTES as usize + 1),
    )
    .unwrap();
    for (name, why) in [
        ("fifo.rules", "not a regular file"),
        ("dir.rules", "not a regular file"),
        ("big.rules", "larger than"),
    ] {
        let err = load_file(&dir.path().join(name)).unwrap_err().to_string();
        assert!(err.contains(name) && err.contains(why), "{err}");
    }
}
