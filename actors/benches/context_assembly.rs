//! Benchmark: initial context assembly for a repository with 50 nested AGENTS.md files and
//! 200 skills (issue: context and configuration). Run with
//! `cargo bench -p troupe-actors --bench context_assembly`.

use std::time::Instant;
use troupe_actors::session::context::initial_context;
use troupe_messages::policy::{AskForApproval, SandboxMode};
use troupe_messages::settings::{
    ContextSettings, ProviderSettings, SessionSettings, ShellEnvPolicy, WireApi,
};

fn main() -> std::io::Result<()> {
    let home = tempfile::tempdir()?;
    let repo = tempfile::tempdir()?;
    std::fs::create_dir_all(repo.path().join(".git"))?;
    let mut dir = repo.path().to_path_buf();
    for depth in 0..50 {
        std::fs::write(
            dir.join("AGENTS.md"),
            format!("rules of level {depth}\n").repeat(10),
        )?;
        dir = dir.join(format!("d{depth}"));
        std::fs::create_dir_all(&dir)?;
    }
    for i in 0..200 {
        let skill = repo.path().join(format!(".agents/skills/skill{i:03}"));
        std::fs::create_dir_all(&skill)?;
        std::fs::write(
            skill.join("SKILL.md"),
            format!("---\nname: skill{i:03}\ndescription: does thing {i}\n---\nbody {i}\n"),
        )?;
    }
    let settings = SessionSettings {
        model: "m".into(),
        provider: ProviderSettings {
            id: "p".into(),
            name: "p".into(),
            base_url: "http://127.0.0.1:1".into(),
            wire_api: WireApi::Responses,
            env_key: None,
            http_headers: Default::default(),
            request_max_retries: 0,
            stream_max_retries: 0,
            stream_idle_timeout_ms: 1,
            request_timeout_ms: 1,
        },
        cwd: dir,
        approval_policy: AskForApproval::OnRequest,
        sandbox_mode: SandboxMode::ReadOnly,
        sandbox: Default::default(),
        base_instructions: String::new(),
        tool_output_max_bytes: 1,
        default_shell_timeout_ms: 1,
        troupe_home: home.path().to_path_buf(),
        rollout_fsync: Default::default(),
        tools: Default::default(),
        context: ContextSettings {
            project_doc_max_bytes: 32 * 1024,
            project_doc_fallback_filenames: Vec::new(),
            project_root_markers: vec![".git".into()],
            model_context_window: None,
            auto_compact_token_limit: None,
            reasoning_effort: None,
            shell_env: ShellEnvPolicy::default(),
            collaboration_mode: Default::default(),
        },
    };
    let mut samples = Vec::new();
    for _ in 0..50 {
        let started = Instant::now();
        let context = initial_context(&settings);
        samples.push(started.elapsed());
        assert_eq!(context.skills.len(), 200);
    }
    samples.sort();
    println!(
        "initial context, 50 nested AGENTS.md + 200 skills: median {:?}, min {:?}, max {:?} (50 runs)",
        samples[samples.len() / 2],
        samples[0],
        samples[samples.len() - 1]
    );
    Ok(())
}
