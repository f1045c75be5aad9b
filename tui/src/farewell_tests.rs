use super::*;
use crate::app::{App, StatusInfo};
use std::path::PathBuf;
use std::time::Instant;
use troupe_messages::ids::ThreadId;
use troupe_messages::policy::{AskForApproval, SandboxMode};

fn app() -> App {
    App::new(StatusInfo {
        model: "m".into(),
        effort: None,
        approval: AskForApproval::OnRequest,
        sandbox: SandboxMode::ReadOnly,
        cwd: PathBuf::from("/w"),
        branch: None,
        context_window: None,
        plan_mode: false,
    })
}

#[test]
fn numbers_are_grouped_by_thousands() {
    assert_eq!(grouped(0), "0");
    assert_eq!(grouped(999), "999");
    assert_eq!(grouped(1000), "1,000");
    assert_eq!(grouped(1234567), "1,234,567");
}

#[test]
fn an_unused_session_prints_nothing_and_a_used_one_its_tokens_and_resume_hint() {
    let mut app = app();
    let index = app.add_root(0, "main".into(), Instant::now());
    assert!(exit_lines(&app).is_empty());
    let id = ThreadId(uuid::Uuid::from_u128(7));
    app.threads[index].id = Some(id);
    app.threads[index].view.prompts.push((1, "hi".into()));
    app.threads[index].view.total_usage = TokenUsage {
        input_tokens: 1200,
        cached_input_tokens: 200,
        output_tokens: 34,
        reasoning_output_tokens: 0,
        total_tokens: 1234,
        cache_write_input_tokens: 0,
    };
    assert_eq!(
        exit_lines(&app),
        vec![
            "Token usage: total=1,234 input=1,000 (+ 200 cached) output=34".to_string(),
            format!("To continue this session, run troupe resume {id}"),
        ]
    );
}
