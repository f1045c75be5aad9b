use crate::{load_file, parse_rules, RuleDecision, Rules, RulesError};
use pretty_assertions::assert_eq;

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
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
    // Compound: the forbidden part dominates the allowed one.
    let parts = vec![argv(&["git", "status"]), argv(&["rm", "-rf", "/"])];
    assert_eq!(
        rules.evaluate_parts(&parts).map(|v| v.0),
        Some(RuleDecision::Forbidden)
    );
    assert!(rules.all_parts_matched(&parts));
    assert!(!rules.all_parts_matched(&[argv(&["git"]), argv(&["ls"])]));
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
    let rules = Rules::load_dirs(&[missing, dir.path().to_path_buf()]).unwrap();
    let firsts: Vec<&str> = rules
        .rules
        .iter()
        .map(|r| r.pattern[0][0].as_str())
        .collect();
    assert_eq!(firsts, ["a", "b"]);
    assert!(load_file(&dir.path().join("nope.rules")).is_err());
}
