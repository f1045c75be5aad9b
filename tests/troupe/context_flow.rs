//! Context assembly through the real binary: AGENTS.md chain and user instructions reach the
//! model, and `debug prompt-input` prints exactly the request the model then receives.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, Harness};

#[test]
fn agents_md_chain_and_user_instructions_reach_the_model() {
    let h = Harness::new(vec![MockResponse::text("ok")]);
    let repo = h.workdir.path();
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("svc")).unwrap();
    std::fs::write(repo.join("AGENTS.md"), "project rule").unwrap();
    std::fs::write(repo.join("svc/AGENTS.md"), "service rule").unwrap();
    std::fs::write(h.home.path().join("AGENTS.md"), "user rule").unwrap();
    let cwd = std::fs::canonicalize(repo.join("svc")).unwrap();
    let out = h.exec(&["--cd", cwd.to_str().unwrap(), "go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let body = &h.mock.requests()[0].body;
    let input = body["input"].as_array().unwrap();
    assert_eq!(input[0]["role"], "developer");
    assert_eq!(
        input[1]["content"][0]["text"],
        format!(
            "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\nuser rule\n\n--- project-doc ---\n\nproject rule\n\nservice rule\n</INSTRUCTIONS>",
            cwd.display()
        )
    );
    let env = input[2]["content"][0]["text"].as_str().unwrap();
    assert!(
        env.contains(&format!("<cwd>{}</cwd>", cwd.display())),
        "{env}"
    );
    assert_eq!(input[3]["content"][0]["text"], "go");
    assert!(body["instructions"]
        .as_str()
        .unwrap()
        .starts_with("You are Troupe"));
}

#[test]
fn debug_prompt_input_is_the_request_the_model_gets() {
    let h = Harness::new(vec![MockResponse::text("ok")]);
    std::fs::write(h.workdir.path().join("AGENTS.md"), "be brief").unwrap();
    let printed = h
        .command()
        .args([
            "debug",
            "prompt-input",
            "-c",
            "model_reasoning_effort=\"high\"",
            "-c",
            "sandbox_mode=danger-full-access",
            "the task",
        ])
        .output()
        .unwrap();
    assert!(printed.status.success(), "{}", stderr(&printed));
    let mut predicted: serde_json::Value = serde_json::from_slice(&printed.stdout).unwrap();
    let out = h.exec(&["-c", "model_reasoning_effort=\"high\"", "the task"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut sent = h.mock.requests()[0].body.clone();
    // The cache key is the thread id, new for every thread.
    predicted
        .as_object_mut()
        .unwrap()
        .remove("prompt_cache_key");
    sent.as_object_mut().unwrap().remove("prompt_cache_key");
    assert_eq!(predicted, sent);
    assert_eq!(sent["reasoning"]["effort"], "high");
    assert!(serde_json::to_string(&sent).unwrap().contains("be brief"));
}

#[test]
fn skills_are_listed_and_a_named_skill_brings_its_body() {
    let h = Harness::new(vec![MockResponse::text("ok")]);
    let user_skill = h.home.path().join("skills/deploy");
    std::fs::create_dir_all(&user_skill).unwrap();
    std::fs::write(
        user_skill.join("SKILL.md"),
        "---\nname: deploy\ndescription: Ship the service\n---\nRun ./ship.sh --prod",
    )
    .unwrap();
    // The workdir is the project root (a stray `.git` higher up must not change that).
    std::fs::create_dir_all(h.workdir.path().join(".git")).unwrap();
    let project_skill = h.workdir.path().join(".agents/skills/lint");
    std::fs::create_dir_all(&project_skill).unwrap();
    std::fs::write(
        project_skill.join("SKILL.md"),
        "---\nname: lint\ndescription: Run the linters\n---\nLINT BODY",
    )
    .unwrap();
    std::fs::write(
        h.workdir.path().join(".agents/skills/README.md"),
        "not a skill dir",
    )
    .unwrap();
    let out = h.exec(&["please $deploy now"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let body = &h.mock.requests()[0].body;
    let texts: Vec<&str> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["content"][0]["text"].as_str().unwrap())
        .collect();
    let list = texts
        .iter()
        .find(|t| t.starts_with("<skills>"))
        .expect("skills list");
    assert!(list.contains("- deploy: Ship the service ("), "{list}");
    assert!(list.contains("- lint: Run the linters ("), "{list}");
    assert!(
        !list.contains("LINT BODY") && !list.contains("ship.sh"),
        "bodies are not listed"
    );
    let n = texts.len();
    assert!(
        texts[n - 2].starts_with("<skill name=\"deploy\"")
            && texts[n - 2].contains("Run ./ship.sh --prod")
    );
    assert_eq!(texts[n - 1], "please $deploy now");
}

#[test]
fn plan_mode_commands_stay_read_only_and_cannot_escalate() {
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![
            ("w", "shell", serde_json::json!({"command": ["sh", "-c", "echo x > plan.txt"]}).to_string()),
            (
                "e",
                "shell",
                serde_json::json!({"command": ["touch", "esc.txt"], "with_escalated_permissions": true, "justification": "need it"})
                    .to_string(),
            ),
        ]),
        MockResponse::text("here is the plan"),
    ]);
    std::fs::create_dir_all(h.workdir.path().join(".git")).unwrap();
    // --full-auto would allow workspace writes; plan mode narrows commands to read-only.
    let out = h.exec(&[
        "--full-auto",
        "-c",
        "collaboration_mode=plan",
        "plan the change",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!h.workdir.path().join("plan.txt").exists());
    assert!(!h.workdir.path().join("esc.txt").exists());
    let input = h.mock.requests()[1].body["input"]
        .as_array()
        .unwrap()
        .clone();
    let output = |id: &str| {
        input
            .iter()
            .find(|i| i["type"] == "function_call_output" && i["call_id"] == id)
            .unwrap()["output"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        output("e").starts_with("plan mode: commands run read-only and cannot be escalated"),
        "{}",
        output("e")
    );
    assert!(
        output("w").contains("Read-only file system"),
        "{}",
        output("w")
    );
}

#[test]
fn user_level_override_wins_over_user_agents_md() {
    let h = Harness::new(vec![MockResponse::text("ok")]);
    std::fs::write(h.home.path().join("AGENTS.md"), "user rule").unwrap();
    std::fs::write(h.home.path().join("AGENTS.override.md"), "override rule").unwrap();
    let out = h.exec(&["go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let body = &h.mock.requests()[0].body;
    let text = body["input"][1]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("<INSTRUCTIONS>\noverride rule\n</INSTRUCTIONS>"),
        "{text}"
    );
    assert!(!text.contains("user rule"), "{text}");
}
