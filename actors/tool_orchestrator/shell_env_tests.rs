use super::shell_env::{child_env, glob_match};
use troupe_messages::settings::ShellEnvPolicy;

fn parent() -> impl Iterator<Item = (String, String)> {
    [
        ("PATH", "/bin"),
        ("HOME", "/root"),
        ("OPENAI_API_KEY", "sk"),
        ("AWS_SECRET", "s"),
        ("FOO_BAR", "1"),
        ("FOO_BAZ", "2"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
}

fn policy(inherit: &str) -> ShellEnvPolicy {
    ShellEnvPolicy {
        inherit: serde_json::from_value(serde_json::Value::from(inherit)).unwrap(),
        ..ShellEnvPolicy::default()
    }
}

#[test]
fn inherit_reads_the_names_rollouts_hold() {
    use troupe_messages::settings::ShellEnvInherit;
    let read = |text: &str| serde_json::from_str::<ShellEnvInherit>(text).unwrap();
    assert_eq!(read("\"all\""), ShellEnvInherit::All);
    assert_eq!(read("\"core\""), ShellEnvInherit::Core);
    assert_eq!(read("\"none\""), ShellEnvInherit::None);
    // `ShellEnvPolicy::default()` used to hold an empty string, which meant `all`.
    assert_eq!(read("\"\""), ShellEnvInherit::All);
    assert_eq!(
        serde_json::to_string(&ShellEnvInherit::Core).unwrap(),
        "\"core\""
    );
}

#[test]
fn default_drops_secrets() {
    let env = child_env(&policy("all"), parent());
    assert!(env.contains_key("PATH") && env.contains_key("FOO_BAR"));
    assert!(!env.contains_key("OPENAI_API_KEY") && !env.contains_key("AWS_SECRET"));
}

#[test]
fn core_none_exclude_include_set() {
    let env = child_env(&policy("core"), parent());
    assert_eq!(env.keys().collect::<Vec<_>>(), ["HOME", "PATH"]);
    assert!(child_env(&policy("none"), parent()).is_empty());
    let mut p = policy("all");
    p.exclude = vec!["foo_*".into()];
    p.set.insert("X".into(), "y".into());
    let env = child_env(&p, parent());
    assert!(!env.contains_key("FOO_BAR") && env["X"] == "y");
    let mut p = policy("all");
    p.include_only = vec!["FOO_B?R".into()];
    p.ignore_default_excludes = true;
    assert_eq!(
        child_env(&p, parent()).keys().collect::<Vec<_>>(),
        ["FOO_BAR"]
    );
}

#[test]
fn globs() {
    assert!(glob_match("*KEY*", "openai_api_key"));
    assert!(!glob_match("A?", "A"));
    assert!(glob_match("*", ""));
}
