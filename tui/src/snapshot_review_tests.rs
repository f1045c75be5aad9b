//! Snapshots (80x24 and 200x50) of the screens added for Codex parity: the work tree's
//! `/diff`, a `/review`'s rendered answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app::App;
use crate::cells::Cell;
use crate::snapshot_tests::{render_app, render_cell, status};
use std::time::Instant;
use troupe_messages::events::EventMsg;

pub(crate) const SIZES: [(u16, u16); 2] = [(80, 24), (200, 50)];

const WORK_TREE_DIFF: &str = "diff --git a/src/lib.rs b/src/lib.rs\nindex 1..2 100644\n--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n fn add(a: i32, b: i32) -> i32 {\n-    a - b\n+    a + b\n }\ndiff --git a/notes.md b/notes.md\nnew file mode 100644\n--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1,3 @@\n+# Notes\n+\n+add() was subtracting.\n";

#[test]
fn work_tree_diff_overlay() {
    let now = Instant::now();
    for (width, height) in SIZES {
        let mut app = App::new(status());
        app.add_root(0, "main".into(), now);
        app.show_work_tree_diff(Ok(WORK_TREE_DIFF.into()));
        insta::assert_snapshot!(
            format!("work_tree_diff_{width}x{height}"),
            render_app(&app, width, height, now)
        );
    }
}

#[test]
fn review_answer_is_rendered() {
    let review = r#"{"findings":[{"title":"[P1] add() subtracts","body":"`add(2, 2)` returns 0.","confidence_score":0.9,"priority":1,"code_location":{"absolute_file_path":"/work/project/src/lib.rs","line_range":{"start":2,"end":2}}}],"overall_correctness":"patch is incorrect","overall_explanation":"One bug in add.","overall_confidence_score":0.8}"#;
    let now = Instant::now();
    let mut app = App::new(status());
    app.add_root(0, "main".into(), now);
    let actions = app.start_review(
        0,
        Ok(troupe_actors::review::ReviewRequest {
            prompt: "review it".into(),
            label: "current changes".into(),
        }),
    );
    assert_eq!(actions.len(), 1);
    app.on_event(
        0,
        EventMsg::AgentMessageDelta {
            delta: "{\"findings\"".into(),
        },
        now,
    );
    assert!(
        app.current_view().live.is_empty(),
        "the JSON is not streamed"
    );
    app.on_event(
        0,
        EventMsg::AgentMessage {
            message: review.into(),
        },
        now,
    );
    let cells: Vec<Cell> = app.take_scrollback();
    let answer = cells
        .iter()
        .find(|c| matches!(c, Cell::Assistant { .. }))
        .expect("the review");
    for (width, height) in SIZES {
        insta::assert_snapshot!(
            format!("review_answer_{width}x{height}"),
            render_cell(answer, width, height)
        );
    }
}

#[test]
fn review_targets_parse() {
    use crate::app::review_target;
    use troupe_actors::review::ReviewTarget;
    assert_eq!(review_target(""), Some(ReviewTarget::Uncommitted));
    assert_eq!(
        review_target("base main"),
        Some(ReviewTarget::BaseBranch {
            branch: "main".into()
        })
    );
    assert_eq!(
        review_target("commit abc123 Fix add"),
        Some(ReviewTarget::Commit {
            sha: "abc123".into(),
            title: Some("Fix add".into())
        })
    );
    assert_eq!(review_target("base"), None);
    assert_eq!(
        review_target("look at error handling"),
        Some(ReviewTarget::Custom {
            instructions: "look at error handling".into()
        })
    );
}

fn models() -> Vec<String> {
    vec![
        "gpt-test".into(),
        "gpt-test-mini".into(),
        "qwen3-coder:30b".into(),
    ]
}

#[test]
fn model_picker_and_model_checks() {
    use crate::app::model::ModelRequest;
    use crate::app::{Action, Overlay};
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
    let now = Instant::now();
    for (width, height) in SIZES {
        let mut app = App::new(status());
        app.add_root(0, "main".into(), now);
        assert!(app
            .models_listed(0, ModelRequest::Pick, Ok(models()))
            .is_empty());
        insta::assert_snapshot!(
            format!("model_picker_{width}x{height}"),
            render_app(&app, width, height, now)
        );
    }
    let mut app = App::new(status());
    app.add_root(0, "main".into(), now);
    app.models_listed(0, ModelRequest::Pick, Ok(models()));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Left));
    let actions = app.on_key(key(KeyCode::Enter));
    assert_eq!(
        actions,
        vec![Action::SetModel {
            client: 0,
            model: "gpt-test-mini".into(),
            effort: Some("medium".into())
        }]
    );
    assert_eq!(app.overlay, Overlay::None);
    assert_eq!(app.status.effort.as_deref(), Some("medium"));
    // A name the provider does not list is refused; a listed one switches.
    let refused = app.models_listed(0, ModelRequest::Switch("nope".into()), Ok(models()));
    assert!(refused.is_empty());
    assert_eq!(app.status.model, "gpt-test-mini");
    let switched = app.models_listed(0, ModelRequest::Switch("gpt-test".into()), Ok(models()));
    assert_eq!(switched.len(), 1);
    // No list to check against: accepted with a warning.
    let unchecked = app.models_listed(
        0,
        ModelRequest::Switch("local-model".into()),
        Err("no /models".into()),
    );
    assert_eq!(unchecked.len(), 1);
    assert_eq!(app.status.model, "local-model");
    let notices: Vec<String> = app
        .take_scrollback()
        .into_iter()
        .filter_map(|c| match c {
            Cell::Notice { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    assert!(
        notices
            .iter()
            .any(|n| n.starts_with("unknown model `nope`")),
        "{notices:?}"
    );
    assert!(
        notices
            .iter()
            .any(|n| n.contains("`local-model` is not checked")),
        "{notices:?}"
    );
}

#[test]
fn threads_panel_statuses_and_live_output() {
    use crate::app::Overlay;
    use troupe_messages::events::{AbortReason, ExecOutputStream};
    use troupe_messages::ids::{ThreadId, TurnId};
    use troupe_messages::usage::TokenUsage;
    let now = Instant::now();
    let later = now + std::time::Duration::from_secs(75);
    let mut app = crate::snapshot_tests::busy_app(now);
    let child = |n: u128, path: &str, msg: EventMsg| EventMsg::AgentEvent {
        thread_id: ThreadId(crate::snapshot_tests::uuid_from(n)),
        task_path: path.into(),
        msg: Box::new(msg),
    };
    let usage = TokenUsage {
        input_tokens: 1200,
        output_tokens: 34,
        total_tokens: 1234,
        ..TokenUsage::default()
    };
    // The running child (`/root/explore`, busy_app's) prints, and counts its tokens.
    for msg in [
        EventMsg::ExecCommandOutputDelta {
            call_id: "k1".into(),
            stream: ExecOutputStream::Stdout,
            chunk: "src/lib.rs:3: fn add(a: i32, b: i32)\n".into(),
        },
        EventMsg::TokenCount {
            last: usage,
            total: usage,
        },
    ] {
        app.on_event(0, child(2, "/root/explore", msg), now);
    }
    let ended = [
        (3, "/root/tests", None),
        (4, "/root/lint", Some(AbortReason::Failed)),
        (5, "/root/docs", Some(AbortReason::Interrupted)),
    ];
    for (n, path, abort) in ended {
        app.on_event(
            0,
            child(n, path, EventMsg::TurnStarted { turn_id: TurnId(1) }),
            now,
        );
        let end = match abort {
            None => EventMsg::TurnComplete {
                turn_id: TurnId(1),
                last_agent_message: Some("ok".into()),
                usage: TokenUsage::default(),
            },
            Some(reason) => EventMsg::TurnAborted {
                turn_id: TurnId(1),
                reason,
            },
        };
        app.on_event(
            0,
            child(n, path, end),
            now + std::time::Duration::from_secs(12),
        );
    }
    app.overlay = Overlay::Threads { selected: 0 };
    for (width, height) in SIZES {
        let screen = render_app(&app, width, height, later);
        for word in [
            "done",
            "failed",
            "interrupted",
            "1234 tok",
            "└ src/lib.rs:3",
        ] {
            assert!(screen.contains(word), "{word}:\n{screen}");
        }
        insta::assert_snapshot!(format!("threads_panel_statuses_{width}x{height}"), screen);
    }
}
