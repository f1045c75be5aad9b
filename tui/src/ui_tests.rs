use super::wanted_height;
use crate::app::Overlay;
use crate::snapshot_tests::busy_app;
use std::time::Instant;
use troupe_messages::events::EventMsg;

#[test]
fn an_idle_viewport_is_the_composer_and_the_status_line() {
    let mut app = crate::app::App::new(crate::snapshot_tests::status());
    app.add_root(0, "main".into(), Instant::now());
    // The composer's rule and line, the status line.
    assert_eq!(wanted_height(&app, 80, 12), 3);
    app.composer.set_text("one\ntwo");
    assert_eq!(wanted_height(&app, 80, 12), 4);
}

#[test]
fn live_cells_and_popups_add_their_rows_up_to_the_most_allowed() {
    let mut app = busy_app(Instant::now());
    let busy = wanted_height(&app, 80, 40);
    assert!(busy > 3 && busy < 40, "{busy}");
    assert_eq!(wanted_height(&app, 80, 5), 5);
    app.composer.set_text("/");
    assert!(wanted_height(&app, 80, 40) > busy);
}

#[test]
fn the_approval_overlay_takes_its_content_and_panels_take_the_most() {
    let now = Instant::now();
    let mut app = busy_app(now);
    let live = wanted_height(&app, 80, 40) - 3;
    app.on_event(
        0,
        EventMsg::ExecApprovalRequest {
            call_id: "a1".into(),
            command: vec!["rm".into(), "x".into()],
            cwd: "/w".into(),
            reason: None,
            sandbox_retry: None,
        },
        now,
    );
    // Command, directory, a blank line, two lines of keys, the border; the status line.
    assert_eq!(wanted_height(&app, 80, 40), live + 7 + 1);
    app.approvals.clear();
    app.overlay = Overlay::Threads { selected: 0 };
    assert_eq!(wanted_height(&app, 80, 40), 40);
}
