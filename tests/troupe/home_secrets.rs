//! What of the user's secrets a hook, the `notify` program or a command sees: all get the
//! policy's scrubbed environment without the provider's key (whatever its name), a sandboxed
//! command cannot read Troupe's stored
//! keys (`$TROUPE_HOME/auth.json`, `.credentials.json`) by any path, and a hook whose program
//! lies inside a writable root is named in a warning.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::hooks_support::{add_hooks, hook, script};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, tool_outputs, Harness};

#[test]
fn a_hook_does_not_see_provider_keys() {
    let h = Harness::new(vec![MockResponse::text("done")]);
    let dump = h.home.path().join("hook-env.txt");
    let command = script(&h, "env.sh", &format!("env > {}\n", dump.display()));
    add_hooks(&h, &hook("UserPromptSubmit", None, &command, 10));
    let out = h
        .command()
        .args([
            "exec",
            "--skip-git-repo-check",
            "-s",
            "read-only",
            // A key variable whose name does not say KEY: dropped as the provider's.
            "-c",
            "model_providers.mock.env_key=\"MOCK_PROVIDER_PASS\"",
            "hi",
        ])
        .env("MOCK_PROVIDER_PASS", "provider-pass-value")
        .env("OPENAI_API_KEY", "sk-openai-secret")
        .env("ANTHROPIC_API_KEY", "sk-anthropic-secret")
        .env("GITHUB_TOKEN", "ghp-secret")
        .env("HOOK_VISIBLE", "plain-value")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let env = std::fs::read_to_string(&dump).unwrap();
    for secret in [
        "sk-openai-secret",
        "sk-anthropic-secret",
        "ghp-secret",
        "MOCK_PROVIDER_PASS",
    ] {
        assert!(!env.contains(secret), "{secret} reached the hook:\n{env}");
    }
    assert!(env.contains("HOOK_VISIBLE=plain-value"), "{env}");
    assert!(env.contains("PATH="), "{env}");
}

#[test]
fn the_notify_program_does_not_see_provider_keys() {
    let h = Harness::new(vec![MockResponse::text("done")]);
    let dump = h.home.path().join("notify-env.txt");
    let config = h.home.path().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    // Top-level keys come before the first table. The program is slower than exec's exit: it
    // must outlive troupe's final sweep of leftover processes.
    let notify = format!(
        "notify = [\"sh\", \"-c\", \"sleep 1; env > {}.tmp && mv {}.tmp {}\"]\n\n",
        dump.display(),
        dump.display(),
        dump.display()
    );
    std::fs::write(&config, notify + &text).unwrap();
    let out = h
        .command()
        .args([
            "exec",
            "--skip-git-repo-check",
            "-c",
            "model_providers.mock.env_key=\"MOCK_PROVIDER_PASS\"",
            "hi",
        ])
        .env("MOCK_PROVIDER_PASS", "provider-pass-value")
        .env("OPENAI_API_KEY", "sk-openai-secret")
        .env("GITHUB_TOKEN", "ghp-secret")
        .env("NOTIFY_VISIBLE", "plain-value")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // The program runs in the background after the turn; exec does not wait for it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !dump.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let env = std::fs::read_to_string(&dump).unwrap();
    for secret in ["sk-openai-secret", "ghp-secret", "MOCK_PROVIDER_PASS"] {
        assert!(!env.contains(secret), "{secret} reached notify:\n{env}");
    }
    assert!(env.contains("NOTIFY_VISIBLE=plain-value"), "{env}");
}

#[test]
fn commands_do_not_see_the_provider_key_whatever_its_name() {
    // The provider's key variable says nothing of a key, and the policy even keeps key-like
    // names: the command's environment still lacks it, on both command tools.
    for tool in ["shell", "exec_command"] {
        let call = if tool == "shell" {
            MockResponse::shell("c1", &["sh", "-c", "env; echo end"])
        } else {
            let args = serde_json::json!({"cmd": "env; echo end", "login": false});
            MockResponse::tool_calls(vec![("c1", "exec_command", args.to_string())])
        };
        let h = Harness::new(vec![call, MockResponse::text("done")]);
        let out = h
            .command()
            .args([
                "exec",
                "--skip-git-repo-check",
                "-s",
                "workspace-write",
                "-c",
                "model_providers.mock.env_key=\"MOCK_PROVIDER_PASS\"",
                "-c",
                "shell_environment_policy.ignore_default_excludes=true",
                "-c",
                &format!("shell_tool_type=\"{tool}\""),
                "print the environment",
            ])
            .env("MOCK_PROVIDER_PASS", "provider-pass-value")
            .env("COMMAND_VISIBLE", "plain-value")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{tool}: {}", stderr(&out));
        let output = tool_outputs(&h.mock.requests()[1].body)[0].clone();
        assert!(output.contains("end"), "{tool}: {output}");
        assert!(
            output.contains("COMMAND_VISIBLE=plain-value"),
            "{tool}: {output}"
        );
        assert!(!output.contains("MOCK_PROVIDER_PASS"), "{tool}: {output}");
        assert!(!output.contains("provider-pass-value"), "{tool}: {output}");
    }
}

#[test]
fn a_sandboxed_command_cannot_read_the_stored_keys() {
    // On both backends: the mount view masks them; Landlock grants read on everything but them.
    for backend in ["linux", "landlock"] {
        stored_keys_stay_unreadable(backend);
    }
}

fn stored_keys_stay_unreadable(backend: &str) {
    // The command finds the home from its environment (and prints it, so the test knows it
    // looked in the right place).
    let attempt = r#"h="$TROUPE_HOME"; echo "home=$h"
cat "$h/auth.json" "$h/.credentials.json"
ln "$h/auth.json" linked 2>&1; cat linked
cp "$h/auth.json" copied 2>&1; cat copied
cat "$h/../$(basename "$h")/./auth.json"
tar cf - -C "$h" . 2>/dev/null | tar xOf - 2>/dev/null
echo end"#;
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["sh", "-c", attempt]),
        MockResponse::text("done"),
    ]);
    let home = h.home.path();
    std::fs::write(
        home.join("auth.json"),
        r#"{"OPENAI_API_KEY": "sk-stored-auth-secret"}"#,
    )
    .unwrap();
    std::fs::write(
        home.join(".credentials.json"),
        r#"{"srv": {"access_token": "oauth-stored-secret"}}"#,
    )
    .unwrap();
    let backend_key = format!("sandbox_backend=\"{backend}\"");
    let out = h.exec_under(
        "workspace-write",
        "never",
        &["-c", &backend_key, "read the keys"],
    );
    assert!(out.status.success(), "{backend}: {}", stderr(&out));
    let output = tool_outputs(&h.mock.requests()[1].body)[0].clone();
    assert!(
        output.contains(&format!("home={}", home.display())) && output.contains("end"),
        "{backend}: the command ran in the home: {output}"
    );
    assert!(
        !output.contains("sk-stored-auth-secret"),
        "{backend}: {output}"
    );
    assert!(
        !output.contains("oauth-stored-secret"),
        "{backend}: {output}"
    );
}

#[test]
fn a_hook_program_inside_a_writable_root_is_warned_about() {
    let h = Harness::new(vec![MockResponse::text("done")]);
    let ci = h.workdir.path().join("ci");
    std::fs::create_dir_all(&ci).unwrap();
    std::fs::write(ci.join("quick-check.sh"), "exit 0\n").unwrap();
    // One in the workspace, one in the home (read-only to commands).
    let safe = script(&h, "safe.sh", "exit 0\n");
    add_hooks(
        &h,
        &format!(
            "{}\n{}",
            hook("Stop", None, "sh ./ci/quick-check.sh", 10),
            hook("UserPromptSubmit", None, &safe, 10)
        ),
    );
    let out = h
        .command()
        .args([
            "exec",
            "--skip-git-repo-check",
            "-s",
            "workspace-write",
            "hi",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let warnings: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("warning: hook"))
        .collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].contains("sh ./ci/quick-check.sh")
            && warnings[0].contains("quick-check.sh, inside the writable root"),
        "{err}"
    );
}
