//! What a worker's thread needs from its supervisor and its follower: its approval
//! requests (denied here, or, for a remote sub-agent, decided by its root's supervisor over
//! the ops subject), its questions (recommended answers, as `exec`), and the requests that
//! arrive on its ops subject.

use anyhow::Result;
use std::time::Duration;
use troupe_actors::runtime::ThreadClient;
use troupe_cluster::sign::{nonce_is_fresh, Side, ThreadKeys, NONCE_HEADER, SIGNATURE_HEADER};
use troupe_cluster::spawn::op_fields;
use troupe_cluster::wire::{ThreadReply, ThreadRequest};
use troupe_messages::agents::AgentMeta;
use troupe_messages::events::{Event, EventMsg};
use troupe_messages::ops::{Op, ReviewDecision};

use super::thread::WorkerContext;

/// How long a remote sub-agent's approval request waits for its root's supervisor before
/// the worker denies it (the parent may be gone).
pub(super) const APPROVAL_PATIENCE: Duration = Duration::from_secs(120);

/// Who answers the thread's approval requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Approvals {
    /// Nobody can be asked (a whole thread, as `exec`): denied here at once.
    DeniedHere,
    /// A remote sub-agent: whoever supervises its root, over the ops subject; denied here
    /// after [`APPROVAL_PATIENCE`].
    Forwarded,
}

impl Approvals {
    /// For a thread that is a remote sub-agent (`agent` set) or a whole thread.
    pub(super) fn of(agent: Option<&AgentMeta>) -> Self {
        match agent {
            Some(_) => Approvals::Forwarded,
            None => Approvals::DeniedHere,
        }
    }
}

pub(super) enum Turn {
    Goes,
    Ended { completed: bool },
}

/// The call id of an approval request of the thread itself that goes to the root's
/// supervisor rather than being denied here.
pub(super) fn forwarded_request(approvals: Approvals, event: &Event) -> Option<String> {
    match (&event.msg, approvals) {
        (
            EventMsg::ExecApprovalRequest { call_id, .. }
            | EventMsg::ApplyPatchApprovalRequest { call_id, .. },
            Approvals::Forwarded,
        ) => Some(call_id.clone()),
        _ => None,
    }
}

/// What the thread needs from its supervisor, which a worker cannot ask anyone for: as
/// `exec`, questions get their recommended answers, and approvals are denied (those of a
/// remote sub-agent itself go to its root's supervisor instead; those of its own
/// sub-agents, which run here, are denied).
pub(super) fn answer_event(
    thread: &mut ThreadClient,
    event: &Event,
    approvals: Approvals,
) -> Result<Turn> {
    if let (
        EventMsg::ExecApprovalRequest { call_id, .. }
        | EventMsg::ApplyPatchApprovalRequest { call_id, .. },
        Approvals::DeniedHere,
    ) = (&event.msg, approvals)
    {
        // One op answers both kinds, as in `exec`.
        thread.submit(Op::ExecApproval {
            call_id: call_id.clone(),
            decision: ReviewDecision::Denied,
        })?;
    }
    if let EventMsg::RequestUserInput { call_id, questions } = &event.msg {
        use troupe_actors::tool_orchestrator::tools::request_user_input::recommended_answers;
        thread.submit(Op::UserInputAnswer {
            call_id: call_id.clone(),
            answers: recommended_answers(questions),
        })?;
    }
    if let EventMsg::AgentEvent { thread_id, msg, .. } = &event.msg {
        if let EventMsg::ExecApprovalRequest { call_id, .. }
        | EventMsg::ApplyPatchApprovalRequest { call_id, .. } = msg.as_ref()
        {
            thread.submit(Op::AgentApproval {
                thread_id: *thread_id,
                call_id: call_id.clone(),
                decision: ReviewDecision::Denied,
            })?;
        }
    }
    if let EventMsg::TurnComplete { .. } = event.msg {
        return Ok(Turn::Ended { completed: true });
    }
    if let EventMsg::TurnAborted { .. } = event.msg {
        return Ok(Turn::Ended { completed: false });
    }
    Ok(Turn::Goes)
}

/// What the ops of a running thread are checked against.
pub(super) struct OpState<'a> {
    pub keys: &'a ThreadKeys,
    /// Forwarded approval requests still unanswered, with when the worker denies them.
    pub pending: &'a mut Vec<(String, tokio::time::Instant)>,
    /// Nonces of the ops taken so far.
    pub seen: &'a mut std::collections::HashSet<String>,
}

/// The op's nonce when it carries the requester's signature over it and the nonce is
/// fresh and unused; why not otherwise.
fn signed_nonce(
    message: &async_nats::Message,
    state: &mut OpState<'_>,
) -> std::result::Result<String, &'static str> {
    let header = |name: &str| {
        message
            .headers
            .as_ref()
            .and_then(|h| h.get(name))
            .map(|v| v.as_str().to_string())
    };
    let nonce = header(NONCE_HEADER).ok_or("no nonce")?;
    let signature = header(SIGNATURE_HEADER).ok_or("not signed")?;
    let subject = message.subject.as_str();
    if !state.keys.verify(
        Side::Requester,
        &op_fields(subject, &nonce, &message.payload),
        &signature,
    ) {
        return Err("not signed by the thread's requester (forged)");
    }
    if !nonce_is_fresh(&nonce, troupe_cluster::now_ms()) {
        return Err("too old (replayed?)");
    }
    if !state.seen.insert(nonce.clone()) {
        return Err("already taken (replayed)");
    }
    Ok(nonce)
}

/// A request from whoever follows the thread.
pub(super) async fn handle_op(
    ctx: &WorkerContext,
    thread: &mut ThreadClient,
    message: async_nats::Message,
    state: &mut OpState<'_>,
) {
    // Nothing of an op is read before its signature is checked; a forged one gets no
    // answer (only the requester could read it).
    let nonce = match signed_nonce(&message, state) {
        Ok(nonce) => nonce,
        Err(reason) => {
            eprintln!(
                "worker {}: ignored a request on {}: {reason}",
                ctx.worker_id, message.subject
            );
            return;
        }
    };
    let signer = Signer {
        keys: state.keys,
        nonce: &nonce,
    };
    let pending = &mut *state.pending;
    let op = match serde_json::from_slice::<ThreadRequest>(&message.payload) {
        Ok(ThreadRequest::Approval { call_id, decision }) => {
            let known = pending.iter().any(|(id, _)| *id == call_id);
            pending.retain(|(id, _)| *id != call_id);
            if known {
                Ok(Op::ExecApproval { call_id, decision })
            } else {
                reply(
                    ctx,
                    &message,
                    &signer,
                    ThreadReply {
                        ok: false,
                        error: Some(format!("no approval request `{call_id}` is waiting")),
                    },
                )
                .await;
                return;
            }
        }
        // A closed thread ends here once its turn stops: closing is interrupting.
        Ok(ThreadRequest::Interrupt | ThreadRequest::Shutdown) => Ok(Op::Interrupt),
        Ok(ThreadRequest::AgentInput { items, start_turn }) => {
            Ok(Op::AgentInput { items, start_turn })
        }
        Err(err) => Err(err),
    };
    let reply_value = match op {
        Ok(op) => match thread.submit(op) {
            Ok(_) => ThreadReply {
                ok: true,
                error: None,
            },
            Err(err) => ThreadReply {
                ok: false,
                error: Some(err.to_string()),
            },
        },
        Err(err) => ThreadReply {
            ok: false,
            error: Some(format!("not a thread request: {err}")),
        },
    };
    reply(ctx, &message, &signer, reply_value).await;
}

/// Signs a reply with the worker's key, over the op's nonce.
struct Signer<'a> {
    keys: &'a ThreadKeys,
    nonce: &'a str,
}

async fn reply(
    ctx: &WorkerContext,
    message: &async_nats::Message,
    signer: &Signer<'_>,
    reply: ThreadReply,
) {
    let (Some(to), Ok(payload)) = (message.reply.clone(), serde_json::to_vec(&reply)) else {
        return;
    };
    let signature = signer.keys.sign(
        Side::Worker,
        &op_fields(message.subject.as_str(), signer.nonce, &payload),
    );
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(SIGNATURE_HEADER, signature.as_str());
    let _ = ctx
        .cluster
        .client
        .publish_with_headers(to, headers, payload.into())
        .await;
}
