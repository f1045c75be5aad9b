use super::command_actions;
use serde_json::{json, Value};

fn actions(argv: &[&str]) -> Value {
    let argv: Vec<String> = argv.iter().map(std::string::ToString::to_string).collect();
    serde_json::to_value(command_actions(&argv)).unwrap()
}

#[test]
fn a_shell_script_is_shown_as_its_inner_commands() {
    assert_eq!(
        actions(&["bash", "-lc", "cat src/main.rs"]),
        json!([{"type": "read", "command": "cat src/main.rs", "name": "main.rs", "path": "src/main.rs"}])
    );
    assert_eq!(
        actions(&["bash", "-lc", "cd app && ls -la src"]),
        json!([{"type": "listFiles", "command": "ls -la src", "path": "src"}])
    );
    assert_eq!(
        actions(&["bash", "-lc", "rg -n TODO src | head -n 20"]),
        json!([{"type": "search", "command": "rg -n TODO src", "query": "TODO", "path": "src"}])
    );
    assert_eq!(
        actions(&["bash", "-lc", "sed -n '1,40p' lib.rs"]),
        json!([{"type": "read", "command": "sed -n 1,40p lib.rs", "name": "lib.rs", "path": "lib.rs"}])
    );
    assert_eq!(
        actions(&["bash", "-lc", "head -n 5 a/b.txt && touch done"]),
        json!([
            {"type": "read", "command": "head -n 5 a/b.txt", "name": "b.txt", "path": "a/b.txt"},
            {"type": "unknown", "command": "touch done"}
        ])
    );
}

#[test]
fn anything_else_is_unknown_with_the_script_not_the_wrapper() {
    assert_eq!(
        actions(&["bash", "-lc", "echo step-1"]),
        json!([{"type": "unknown", "command": "echo step-1"}])
    );
    // Syntax beyond words and operators: the whole script, unparsed.
    assert_eq!(
        actions(&["bash", "-lc", "for f in *; do cat $f; done"]),
        json!([{"type": "unknown", "command": "for f in *; do cat $f; done"}])
    );
    assert_eq!(
        actions(&["find", ".", "-name", "*.rs", "-delete"]),
        json!([{"type": "unknown", "command": "find . -name '*.rs' -delete"}])
    );
    assert_eq!(
        actions(&["touch", "a b"]),
        json!([{"type": "unknown", "command": "touch 'a b'"}])
    );
}
