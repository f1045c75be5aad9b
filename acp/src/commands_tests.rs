use super::*;
use crate::updates::UpdateMapper;
use std::path::PathBuf;
use troupe_messages::events::{EventMsg, ExecOutputStream};

fn begin(call_id: &str, script: &str) -> EventMsg {
    EventMsg::ExecCommandBegin {
        call_id: call_id.into(),
        command: vec!["bash".into(), "-lc".into(), script.into()],
        cwd: PathBuf::from("/w"),
        user_shell: false,
    }
}

fn delta(call_id: &str, chunk: &str) -> EventMsg {
    EventMsg::ExecCommandOutputDelta {
        call_id: call_id.into(),
        stream: ExecOutputStream::Stdout,
        chunk: chunk.into(),
    }
}

fn end(call_id: &str, exit_code: Option<i32>) -> EventMsg {
    EventMsg::ExecCommandEnd {
        call_id: call_id.into(),
        command: vec![],
        exit_code,
        aggregated_output: "whole output\n".into(),
        duration_ms: 3,
        timed_out: false,
        user_shell: false,
    }
}

fn terminal_mapper() -> UpdateMapper {
    let mut mapper = UpdateMapper::default();
    mapper.set_terminal_output(true);
    mapper
}

#[test]
fn an_execution_shows_in_a_display_only_terminal() {
    let mut mapper = terminal_mapper();
    let start = mapper.on_event(&begin("c1", "cargo build"));
    assert_eq!(start[0]["sessionUpdate"], "tool_call");
    assert_eq!(
        start[0]["content"],
        json!([{"type": "terminal", "terminalId": "c1"}])
    );
    assert_eq!(
        start[0]["_meta"]["terminal_info"],
        json!({"terminal_id": "c1", "cwd": "/w"})
    );
    let piece = mapper.on_event(&delta("c1", "Compiling\n"));
    assert_eq!(piece[0]["sessionUpdate"], "tool_call_update");
    assert!(piece[0].get("content").is_none(), "{piece:?}");
    assert_eq!(
        piece[0]["_meta"]["terminal_output"],
        json!({"terminal_id": "c1", "data": "Compiling\n"})
    );
    let last = mapper.on_event(&end("c1", Some(2)));
    assert_eq!(last[0]["status"], "failed");
    assert!(
        last[0].get("content").is_none(),
        "the terminal stays: {last:?}"
    );
    assert_eq!(last[0]["rawOutput"]["exitCode"], 2);
    assert_eq!(
        last[0]["_meta"]["terminal_exit"],
        json!({"terminal_id": "c1", "exit_code": 2, "signal": null})
    );
}

#[test]
fn reads_and_searches_stay_text_and_nothing_is_a_terminal_without_the_opt_in() {
    let mut mapper = terminal_mapper();
    let read = mapper.on_event(&begin("r1", "cat notes.txt"));
    assert!(read[0].get("_meta").is_none());
    let piece = mapper.on_event(&delta("r1", "text\n"));
    assert_eq!(piece[0]["content"][0]["content"]["text"], "text\n");
    let mut plain = UpdateMapper::default();
    let start = plain.on_event(&begin("c1", "cargo build"));
    assert!(start[0].get("content").is_none() && start[0].get("_meta").is_none());
    let last = plain.on_event(&end("c1", Some(0)));
    assert_eq!(last[0]["content"][0]["content"]["text"], "whole output\n");
}

#[test]
fn a_terminal_gets_its_share_then_a_notice_cut_on_a_char_boundary() {
    let mut mapper = terminal_mapper();
    mapper.on_event(&begin("c1", "make"));
    let filler = "x".repeat(TERMINAL_STREAM_LIMIT - 1);
    let first = mapper.on_event(&delta("c1", &filler));
    assert_eq!(
        first[0]["_meta"]["terminal_output"]["data"]
            .as_str()
            .unwrap()
            .len(),
        TERMINAL_STREAM_LIMIT - 1
    );
    // "é" is two bytes: one byte of room left, so it is not split.
    let cut = mapper.on_event(&delta("c1", "éé"));
    let data = cut[0]["_meta"]["terminal_output"]["data"].as_str().unwrap();
    assert!(
        data.starts_with("\r\n[troupe: the terminal shows the first 1024 KiB"),
        "{data}"
    );
    assert!(mapper.on_event(&delta("c1", "more")).is_empty());
}

#[test]
fn the_client_opts_in_through_capabilities_meta() {
    let parse = |caps: Value| -> crate::protocol::ClientCapabilities {
        serde_json::from_value(caps).unwrap()
    };
    assert!(parse(json!({"terminal": true, "_meta": {"terminal_output": true}})).terminal_output);
    let plain = parse(json!({"terminal": true}));
    assert!(plain.terminal && !plain.terminal_output);
    // Another `_meta` is the client's business, not an error.
    assert!(!parse(json!({"_meta": {"terminal_output": "yes", "x": 1}})).terminal_output);
    assert!(!parse(json!({"_meta": null})).terminal_output);
}

#[test]
fn titles_unwrap_the_shell_and_kinds_follow_the_program() {
    let argv = |s: &str| vec!["bash".to_string(), "-lc".to_string(), s.to_string()];
    assert_eq!(command_title(&argv("echo hi")), "echo hi");
    assert_eq!(command_title(&["ls".into(), "a b".into()]), "ls 'a b'");
    assert!(shows_in_terminal(true, &argv("npm test")));
    assert!(!shows_in_terminal(true, &argv("rg foo")));
    assert!(!shows_in_terminal(false, &argv("npm test")));
}
