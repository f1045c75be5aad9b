//! `/rewind` (80x24): the turn picker, the choice of what to take back, the preview with its
//! diff, the preview with files changed by someone else; and the keys between them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::app::rewind::{RewindMode, RewindStage};
use crate::app::{Action, App, Overlay};
use crate::snapshot_tests::{render_app, status};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::path::PathBuf;
use std::time::Instant;
use troupe_actors::thread_store::rewind::{CodeOutcome, ConversationOutcome, RewindOutcome};
use troupe_actors::thread_store::rewind_preview::{FileDiff, RewindPreview, TurnRow};
use troupe_checkpoint::{Change, ChangeKind};
use troupe_messages::ids::ThreadId;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn turns() -> Vec<TurnRow> {
    vec![
        TurnRow {
            turn: 3,
            prompt: "rename the module\nand fix its imports".into(),
            files_changed: Some(4),
        },
        TurnRow {
            turn: 2,
            prompt: "write made.txt with a shell command".into(),
            files_changed: Some(1),
        },
        TurnRow {
            turn: 1,
            prompt: "what does this project do?".into(),
            files_changed: None,
        },
    ]
}

/// An app whose thread's `/rewind` picker is open.
fn picker() -> (App, ThreadId) {
    let now = Instant::now();
    let mut app = App::new(status());
    app.add_root(0, "main".into(), now);
    let thread = ThreadId::new();
    app.threads[0].id = Some(thread);
    for c in "/rewind".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    let actions = app.on_key(key(KeyCode::Enter));
    assert_eq!(actions, vec![Action::RewindTurns { client: 0, thread }]);
    app.open_rewind(0, thread, Ok(turns()));
    (app, thread)
}

fn preview(conflicts: Vec<PathBuf>) -> RewindPreview {
    let root = PathBuf::from("/work/project");
    RewindPreview {
        outcome: RewindOutcome {
            thread_id: "t".into(),
            dry_run: true,
            code: Some(CodeOutcome {
                changes: vec![
                    Change {
                        root: root.clone(),
                        path: "made.txt".into(),
                        kind: ChangeKind::Removed,
                    },
                    Change {
                        root: root.clone(),
                        path: "src/lib.rs".into(),
                        kind: ChangeKind::Modified,
                    },
                ],
                failed: Vec::new(),
                kept_dirs: Vec::new(),
                not_covered: Vec::new(),
            }),
            conversation: Some(ConversationOutcome {
                turns_before: 3,
                turns_after: 1,
            }),
        },
        conflicts,
        diffs: vec![
            FileDiff {
                path: root.join("made.txt"),
                kind: ChangeKind::Removed,
                diff: "--- a/made.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-made by turn two\n".into(),
            },
            FileDiff {
                path: root.join("src/lib.rs"),
                kind: ChangeKind::Modified,
                diff: "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n fn add(a: i32, b: i32) -> i32 {\n-    a + b\n+    a - b\n }\n".into(),
            },
        ],
    }
}

#[test]
fn rewind_turn_picker() {
    let (app, _) = picker();
    insta::assert_snapshot!(
        "rewind_turns_80x24",
        render_app(&app, 80, 24, Instant::now())
    );
}

#[test]
fn rewind_mode_choice() {
    let (mut app, _) = picker();
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    insta::assert_snapshot!(
        "rewind_mode_80x24",
        render_app(&app, 80, 24, Instant::now())
    );
}

#[test]
fn rewind_preview_with_its_diff() {
    let (mut app, thread) = picker();
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    let actions = app.on_key(key(KeyCode::Enter));
    assert_eq!(
        actions,
        vec![Action::RewindPreview {
            thread,
            turn: 2,
            mode: RewindMode::Both
        }]
    );
    app.show_rewind_preview(Ok(preview(Vec::new())));
    insta::assert_snapshot!(
        "rewind_preview_80x24",
        render_app(&app, 80, 24, Instant::now())
    );
    let actions = app.on_key(key(KeyCode::Enter));
    assert_eq!(
        actions,
        vec![Action::Rewind {
            client: 0,
            thread,
            turn: 2,
            mode: RewindMode::Both,
            force: false,
            prompt: "write made.txt with a shell command".into(),
        }]
    );
    assert_eq!(app.overlay, Overlay::None);
}

#[test]
fn rewind_preview_names_files_changed_by_someone_else_and_needs_f() {
    let (mut app, thread) = picker();
    app.on_key(key(KeyCode::Enter));
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Enter));
    let mut code_only = preview(vec![PathBuf::from("/work/project/notes.md")]);
    code_only.outcome.conversation = None;
    app.show_rewind_preview(Ok(code_only));
    insta::assert_snapshot!(
        "rewind_preview_conflicts_80x24",
        render_app(&app, 80, 24, Instant::now())
    );
    assert!(
        app.on_key(key(KeyCode::Enter)).is_empty(),
        "Enter is refused"
    );
    let actions = app.on_key(key(KeyCode::Char('f')));
    assert!(
        matches!(
            actions.as_slice(),
            [Action::Rewind { force: true, turn: 3, mode: RewindMode::Code, thread: t, .. }] if *t == thread
        ),
        "{actions:?}"
    );
}

#[test]
fn esc_goes_back_a_step_and_a_failed_preview_returns_to_the_choice() {
    let (mut app, _) = picker();
    app.on_key(key(KeyCode::Enter));
    app.on_key(key(KeyCode::Enter));
    app.show_rewind_preview(Err("no checkpoint of the work tree before turn 3".into()));
    let Overlay::Rewind(picker) = &app.overlay else {
        panic!("closed")
    };
    assert_eq!(picker.stage, RewindStage::Mode { selected: 0 });
    app.on_key(key(KeyCode::Esc));
    let Overlay::Rewind(picker) = &app.overlay else {
        panic!("closed")
    };
    assert_eq!(picker.stage, RewindStage::Turns);
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.overlay, Overlay::None);
}

#[test]
fn a_rewound_thread_replaces_its_entry_and_gets_its_prompt_back() {
    let (mut app, thread) = picker();
    app.overlay = Overlay::None;
    let now = Instant::now();
    // A sub-agent of the old session: gone with it.
    app.on_event(
        0,
        troupe_messages::events::EventMsg::AgentEvent {
            thread_id: ThreadId::new(),
            task_path: "/root/explore".into(),
            msg: Box::new(troupe_messages::events::EventMsg::ShutdownComplete),
        },
        now,
    );
    assert_eq!(app.threads.len(), 2);
    app.rewound(
        0,
        1,
        crate::thread_view::ThreadView::new(now),
        "rewound to before turn 2".into(),
        Some("write made.txt".into()),
    );
    assert_eq!(app.threads.len(), 1);
    assert_eq!(app.threads[0].client, 1);
    assert_eq!(app.threads[0].id, Some(thread));
    assert_eq!(app.current, 0);
    assert_eq!(app.composer.text(), "write made.txt");
}
