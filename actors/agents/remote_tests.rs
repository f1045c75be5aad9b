use super::remote::request_for;
use super::remote_spawn::{check_remote_args, resolve_placement};
use super::spawn_request::SpawnArgs;
use pretty_assertions::assert_eq;
use troupe_cluster::wire::ThreadRequest;
use troupe_messages::cluster::{ClusterConfig, Placement};
use troupe_messages::ops::{Op, ReviewDecision, UserInput};

fn pool(placement: Option<Placement>) -> ClusterConfig {
    ClusterConfig {
        nats_url: Some("nats://127.0.0.1:4222".into()),
        placement,
        ..ClusterConfig::default()
    }
}

#[test]
fn placement_defaults_to_config_then_local() {
    let none = ClusterConfig::default();
    assert_eq!(resolve_placement(None, &none, 0, 8), Ok(Placement::Local));
    assert_eq!(
        resolve_placement(None, &pool(Some(Placement::Remote)), 0, 8),
        Ok(Placement::Remote)
    );
    assert_eq!(
        resolve_placement(Some("local"), &pool(Some(Placement::Remote)), 0, 8),
        Ok(Placement::Local)
    );
    assert_eq!(
        resolve_placement(None, &pool(None), 0, 8),
        Ok(Placement::Local)
    );
}

#[test]
fn auto_goes_remote_only_when_local_slots_are_full_and_a_pool_exists() {
    let auto = pool(Some(Placement::Auto));
    assert_eq!(resolve_placement(None, &auto, 7, 8), Ok(Placement::Local));
    assert_eq!(resolve_placement(None, &auto, 8, 8), Ok(Placement::Remote));
    let no_pool = ClusterConfig::default();
    assert_eq!(
        resolve_placement(Some("auto"), &no_pool, 8, 8),
        Ok(Placement::Local)
    );
}

#[test]
fn remote_without_a_pool_and_unknown_values_are_tool_errors() {
    let err = resolve_placement(Some("remote"), &ClusterConfig::default(), 0, 8).unwrap_err();
    assert!(err.contains("no worker pool is configured"), "{err}");
    assert!(err.contains("nats_url"), "{err}");
    let err = resolve_placement(Some("cloud"), &pool(None), 0, 8).unwrap_err();
    assert!(err.contains("`cloud`"), "{err}");
}

#[test]
fn remote_refuses_what_would_shape_the_session_here() {
    let args = |extra: serde_json::Value| -> SpawnArgs {
        let mut value = serde_json::json!({"task_name": "a", "message": "m"});
        for (k, v) in extra.as_object().unwrap() {
            value[k] = v.clone();
        }
        serde_json::from_value(value).unwrap()
    };
    assert!(check_remote_args(&args(serde_json::json!({}))).is_ok());
    assert!(check_remote_args(&args(serde_json::json!({"fork_turns": "none"}))).is_ok());
    let err = check_remote_args(&args(serde_json::json!({
        "fork_turns": "all", "model": "x", "agent_type": "explorer", "worktree": true
    })))
    .unwrap_err();
    for named in ["fork_turns", "`model`", "`agent_type`", "`worktree`"] {
        assert!(err.contains(named), "{named}: {err}");
    }
}

#[test]
fn ops_become_requests_on_the_ops_subject() {
    assert_eq!(request_for(Op::Interrupt), Some(ThreadRequest::Interrupt));
    assert_eq!(request_for(Op::Shutdown), Some(ThreadRequest::Shutdown));
    let items = vec![UserInput::Text { text: "hi".into() }];
    assert_eq!(
        request_for(Op::AgentInput {
            items: items.clone(),
            start_turn: false
        }),
        Some(ThreadRequest::AgentInput {
            items,
            start_turn: false
        })
    );
    assert_eq!(request_for(Op::Compact), None);
    assert_eq!(
        request_for(Op::ExecApproval {
            call_id: "c".into(),
            decision: ReviewDecision::Denied
        }),
        Some(ThreadRequest::Approval {
            call_id: "c".into(),
            decision: ReviewDecision::Denied
        })
    );
}
