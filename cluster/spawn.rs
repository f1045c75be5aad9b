//! The requester's side of placement: publish a spawn request to the pool's work queue and
//! wait for a worker's answer; and requests to a running thread's worker.

use crate::layout::spawn_key;
use crate::sign::{Side, ThreadKeys, NONCE_HEADER, SIGNATURE_HEADER};
use crate::wire::{SpawnAnswer, SpawnRequest, ThreadReply, ThreadRequest};
use crate::{Cluster, ClusterError};
use async_nats::client::RequestErrorKind;
use async_nats::connection::State;
use async_nats::jetstream::kv::Operation;
use futures::StreamExt;
use std::time::Duration;

/// How long a request to a thread's worker may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// Publishes `request` and waits (up to the pool's spawn deadline) for the worker that took
/// it. On the deadline the request is taken back out of the queue, so no worker starts it
/// later, and the error says so.
pub async fn request_spawn(
    cluster: &Cluster,
    request: &SpawnRequest,
) -> Result<SpawnAnswer, ClusterError> {
    crate::layout::check_token(&request.request_id)?;
    let key = spawn_key(&request.request_id);
    // Watch first: an answer written before the watch starts is delivered by it too.
    let mut watch = cluster
        .kv
        .watch_with_history(&key)
        .await
        .map_err(|err| ClusterError::js("watch of the spawn answer", err))?;
    let payload =
        serde_json::to_vec(request).map_err(|err| ClusterError::js("spawn request", err))?;
    let layout = cluster.layout();
    let ack = cluster
        .js
        .publish(layout.spawn_subject(), payload.into())
        .await
        .map_err(|err| ClusterError::js("spawn request", err))?
        .await
        .map_err(|err| ClusterError::js("spawn request", err))?;
    let deadline = cluster.options.spawn_deadline;
    let answer = tokio::time::timeout(deadline, async {
        while let Some(entry) = watch.next().await {
            let Ok(entry) = entry else { continue };
            if entry.operation != Operation::Put {
                continue;
            }
            return serde_json::from_slice::<SpawnAnswer>(&entry.value).map_err(|err| {
                ClusterError::Malformed {
                    subject: key.clone(),
                    reason: err.to_string(),
                }
            });
        }
        Err(ClusterError::js("watch of the spawn answer", "ended"))
    })
    .await;
    match answer {
        Ok(answer) => {
            let answer = answer?;
            // Read: the answer has served (the bucket keeps no record of old requests).
            let _ = cluster.kv.purge(&key).await;
            match (&answer.thread_id, &answer.error) {
                (Some(thread), None) => {
                    crate::layout::check_token(thread)?;
                    Ok(answer)
                }
                (_, error) => Err(ClusterError::SpawnRefused {
                    worker: answer.worker.clone(),
                    reason: error.clone().unwrap_or_else(|| "no reason given".into()),
                }),
            }
        }
        Err(_) => {
            // Not taken: out of the queue. (Already taken means a worker acked it just now;
            // it will see the deadline passed and refuse it.)
            if let Ok(stream) = cluster.js.get_stream(layout.spawn_stream()).await {
                let _ = stream.delete_message(ack.sequence).await;
            }
            Err(ClusterError::SpawnDeadline {
                deadline_ms: u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX),
                pool: layout.pool().to_string(),
            })
        }
    }
}

/// Pause between looks at the connection, and between tries of a request nobody heard.
const REQUEST_RETRY_PAUSE: Duration = Duration::from_millis(50);

/// Whether the connection was up when a request was made, or came back meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Link {
    Up,
    CameBack,
}

/// Asks the worker running `thread` to do `request`, within `REQUEST_TIMEOUT`.
///
/// During an outage (a server restart) the request is held here until the connection is
/// back, not handed to the client: async-nats would keep it and send it after the
/// reconnect, so a request this call reported failed could still reach the worker later.
/// Once the connection is back, "no responders" is tried again until the deadline (the
/// worker may not have subscribed again yet); an outage that outlasts the deadline fails
/// with nothing sent.
pub async fn thread_request(
    cluster: &Cluster,
    thread: &str,
    keys: &ThreadKeys,
    request: &ThreadRequest,
) -> Result<(), ClusterError> {
    let subject = cluster.layout().ops_subject(thread)?;
    let payload: bytes::Bytes = serde_json::to_vec(request)
        .map_err(|err| ClusterError::js("thread request", err))?
        .into();
    // Signed by the requester's key over a fresh nonce: nobody without the thread's secret
    // can make the worker act, nor replay this request later.
    let nonce = crate::sign::new_nonce().map_err(|err| ClusterError::js("thread request", err))?;
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(NONCE_HEADER, nonce.as_str());
    headers.insert(
        SIGNATURE_HEADER,
        keys.sign(Side::Requester, &op_fields(&subject, &nonce, &payload))
            .as_str(),
    );
    let deadline = tokio::time::Instant::now() + REQUEST_TIMEOUT;
    let link = connected_by(&cluster.client, deadline)
        .await
        .ok_or_else(|| {
            ClusterError::NoReply(format!(
                "the NATS server is unreachable (reconnecting); nothing was sent on {subject}"
            ))
        })?;
    let reply = loop {
        let sent = tokio::time::timeout_at(
            deadline,
            cluster.client.send_request(
                subject.clone(),
                async_nats::Request::new()
                    .headers(headers.clone())
                    .payload(payload.clone()),
            ),
        )
        .await
        .map_err(|_| ClusterError::NoReply(format!("no answer on {subject}")))?;
        match sent {
            Ok(reply) => break reply,
            Err(err)
                if link == Link::CameBack
                    && err.kind() == RequestErrorKind::NoResponders
                    && tokio::time::Instant::now() + REQUEST_RETRY_PAUSE < deadline =>
            {
                tokio::time::sleep(REQUEST_RETRY_PAUSE).await;
            }
            Err(err) => return Err(ClusterError::NoReply(err.to_string())),
        }
    };
    // The reply is the worker's, about this very request: else it says nothing.
    let signature = reply
        .headers
        .as_ref()
        .and_then(|h| h.get(SIGNATURE_HEADER))
        .map(|v| v.as_str().to_string())
        .unwrap_or_default();
    if !keys.verify(
        Side::Worker,
        &op_fields(&subject, &nonce, &reply.payload),
        &signature,
    ) {
        return Err(ClusterError::NoReply(format!(
            "the answer on {subject} is not signed by the thread's worker"
        )));
    }
    let reply: ThreadReply =
        serde_json::from_slice(&reply.payload).map_err(|err| ClusterError::Malformed {
            subject: subject.clone(),
            reason: err.to_string(),
        })?;
    match reply.error {
        Some(error) if !reply.ok => Err(ClusterError::Refused(error)),
        _ => Ok(()),
    }
}

/// What the requester's key signs of an op, and the worker's of its reply: the ops
/// subject (thread and pool), the op's nonce and the payload.
pub fn op_fields<'a>(subject: &'a str, nonce: &'a str, payload: &'a [u8]) -> [&'a [u8]; 3] {
    [subject.as_bytes(), nonce.as_bytes(), payload]
}

/// Waits until `client` is connected, at most until `deadline`; `None` if it is not by then.
async fn connected_by(client: &async_nats::Client, deadline: tokio::time::Instant) -> Option<Link> {
    let mut link = Link::Up;
    loop {
        if client.connection_state() == State::Connected {
            return Some(link);
        }
        if tokio::time::Instant::now() + REQUEST_RETRY_PAUSE >= deadline {
            return None;
        }
        link = Link::CameBack;
        tokio::time::sleep(REQUEST_RETRY_PAUSE).await;
    }
}
