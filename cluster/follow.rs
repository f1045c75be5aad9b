//! Following one thread's subject by stream sequence. The follower remembers the last
//! sequence it delivered; when its consumer breaks (a reconnect, a server restart) it makes
//! a new one starting right after it, and drops anything at or before it, so nothing is
//! lost and nothing is delivered twice.

use crate::sign::{Side, ThreadKeys, PREVIOUS_HEADER, SIGNATURE_HEADER};
use crate::wire::{Kind, KIND_HEADER, PART_HEADER, ROLLOUT_HEADER};
use crate::{Cluster, ClusterError};
use async_nats::jetstream::consumer::{pull::OrderedConfig, DeliverPolicy};
use futures::StreamExt;
use std::time::Duration;

/// One message of a thread's subject.
#[derive(Debug, Clone)]
pub struct ThreadMessage {
    pub seq: u64,
    pub kind: Kind,
    pub payload: bytes::Bytes,
    /// For a rollout line: its path relative to `TROUPE_HOME`.
    pub rollout_path: Option<String>,
    /// `(k, n)` of a message sent in parts.
    pub part: Option<(usize, usize)>,
}

/// Reassembles messages sent in parts; parts must come in order, `1/n` to `n/n`.
#[derive(Debug, Default)]
pub struct Parts {
    buffer: Vec<u8>,
    next: usize,
}

impl Parts {
    /// The whole message once `message` completes it (or is whole by itself).
    pub fn add(
        &mut self,
        subject: &str,
        message: ThreadMessage,
    ) -> Result<Option<ThreadMessage>, ClusterError> {
        let Some((k, n)) = message.part else {
            if self.next != 0 {
                return Err(self.broken(subject, message.seq));
            }
            return Ok(Some(message));
        };
        if k != self.next + 1 || k > n || n == 0 {
            return Err(self.broken(subject, message.seq));
        }
        self.buffer.extend_from_slice(&message.payload);
        if k < n {
            self.next = k;
            return Ok(None);
        }
        self.next = 0;
        Ok(Some(ThreadMessage {
            payload: std::mem::take(&mut self.buffer).into(),
            part: None,
            ..message
        }))
    }

    fn broken(&mut self, subject: &str, seq: u64) -> ClusterError {
        self.buffer.clear();
        self.next = 0;
        ClusterError::Malformed {
            subject: subject.to_string(),
            reason: format!("message {seq} breaks the order of a message sent in parts"),
        }
    }
}

/// Where a follower stands: the last sequence delivered.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SeqCursor {
    last: u64,
}

impl SeqCursor {
    /// Where a new consumer starts: right after the last delivered sequence.
    pub fn start(&self) -> u64 {
        self.last + 1
    }

    /// Whether `seq` is new (and then it counts as delivered); a redelivery is not.
    pub fn accept(&mut self, seq: u64) -> bool {
        if seq > self.last {
            self.last = seq;
            true
        } else {
            false
        }
    }

    pub fn last(&self) -> u64 {
        self.last
    }
}

type Messages = async_nats::jetstream::consumer::pull::Ordered;

/// Reads one thread's subject in order.
pub struct ThreadFollower {
    cluster: Cluster,
    subject: String,
    cursor: SeqCursor,
    messages: Option<Messages>,
    /// The parts so far of a message sent in parts.
    parts: Parts,
    /// The thread's keys: only messages the worker's key signed are delivered.
    keys: ThreadKeys,
    /// The sequence of the last message delivered that was signed (0: none yet).
    last_signed: u64,
    /// Why messages were dropped since the last look (forged, replayed, unsigned).
    dropped: Vec<String>,
}

/// How long the follower waits for a message before it checks that the stream still exists.
const IDLE_CHECK: Duration = Duration::from_secs(2);

/// Pause before a broken consumer is made again.
const RETRY_PAUSE: Duration = Duration::from_millis(200);

impl ThreadFollower {
    pub fn new(cluster: &Cluster, thread: &str, keys: ThreadKeys) -> Result<Self, ClusterError> {
        Ok(Self {
            cluster: cluster.clone(),
            subject: cluster.layout().events_subject(thread)?,
            cursor: SeqCursor::default(),
            messages: None,
            parts: Parts::default(),
            keys,
            last_signed: 0,
            dropped: Vec::new(),
        })
    }

    pub fn cursor(&self) -> SeqCursor {
        self.cursor
    }

    /// The sequence of the last signed message read (where a worker taking the thread
    /// over signs on from).
    pub fn last_signed(&self) -> u64 {
        self.last_signed
    }

    /// Why messages were dropped since the last call (each to be logged by the caller).
    pub fn take_dropped(&mut self) -> Vec<String> {
        std::mem::take(&mut self.dropped)
    }

    /// The next message; retries through reconnects and server restarts until one comes.
    pub async fn next(&mut self) -> Result<ThreadMessage, ClusterError> {
        loop {
            let messages = match &mut self.messages {
                Some(messages) => messages,
                None => match consumer(&self.cluster, &self.subject, self.cursor.start()).await {
                    Ok(messages) => self.messages.insert(messages),
                    Err(err @ ClusterError::StreamGone { .. }) => return Err(err),
                    Err(err) => {
                        tracing::debug!(%err, "cannot follow the thread yet; retrying");
                        tokio::time::sleep(RETRY_PAUSE).await;
                        continue;
                    }
                },
            };
            let Ok(next) = tokio::time::timeout(IDLE_CHECK, messages.next()).await else {
                // Quiet for a while: fine, unless the stream itself is gone (the consumer
                // then waits for ever).
                if let Err(err @ ClusterError::StreamGone { .. }) =
                    stream_exists(&self.cluster).await
                {
                    return Err(err);
                }
                continue;
            };
            match next {
                Some(Ok(message)) => {
                    let Ok(info) = message.info() else { continue };
                    let seq = info.stream_sequence;
                    if !self.cursor.accept(seq) {
                        continue;
                    }
                    // Before anything else is read of it: a forged message is dropped, not
                    // an error (which would let a forger stop the follower).
                    if let Err(reason) = check_signature(
                        &self.keys,
                        &self.subject,
                        self.last_signed,
                        message.headers.as_ref(),
                        &message.payload,
                    ) {
                        tracing::warn!(subject = %self.subject, seq, %reason, "dropped a message");
                        self.dropped
                            .push(format!("message {seq} on {}: {reason}", self.subject));
                        continue;
                    }
                    self.last_signed = seq;
                    let parsed = parse(&self.subject, seq, &message)?;
                    if let Some(whole) = self.parts.add(&self.subject, parsed)? {
                        return Ok(whole);
                    }
                }
                Some(Err(err)) => {
                    tracing::debug!(%err, "the thread's consumer broke; resuming after {}", self.cursor.last());
                    self.messages = None;
                    tokio::time::sleep(RETRY_PAUSE).await;
                }
                None => {
                    self.messages = None;
                    tokio::time::sleep(RETRY_PAUSE).await;
                }
            }
        }
    }

    /// The sequence of the last message on `thread`'s subject now; `None` when empty.
    /// (Not a method: the follower holds a stream that is not `Sync`.)
    pub async fn last_sequence(
        cluster: &Cluster,
        thread: &str,
    ) -> Result<Option<u64>, ClusterError> {
        let layout = cluster.layout();
        let subject = layout.events_subject(thread)?;
        let stream = cluster
            .js
            .get_stream(layout.threads_stream())
            .await
            .map_err(|err| ClusterError::js(format!("stream {}", layout.threads_stream()), err))?;
        match stream.get_last_raw_message_by_subject(&subject).await {
            Ok(message) => Ok(Some(message.sequence)),
            Err(err)
                if matches!(
                    err.kind(),
                    async_nats::jetstream::stream::LastRawMessageErrorKind::NoMessageFound
                ) =>
            {
                Ok(None)
            }
            Err(err) => Err(ClusterError::js(format!("last of {subject}"), err)),
        }
    }
}

/// A consumer of `subject` from sequence `start` on. (A free function: the follower holds
/// a stream that is not `Sync`, so no `&self` may live across an await.)
async fn consumer(cluster: &Cluster, subject: &str, start: u64) -> Result<Messages, ClusterError> {
    let layout = cluster.layout();
    let stream = cluster
        .js
        .get_stream(layout.threads_stream())
        .await
        .map_err(|err| stream_error(&layout.threads_stream(), err))?;
    let consumer = stream
        .create_consumer(OrderedConfig {
            filter_subject: subject.to_string(),
            deliver_policy: DeliverPolicy::ByStartSequence {
                start_sequence: start,
            },
            ..OrderedConfig::default()
        })
        .await
        .map_err(|err| ClusterError::js(format!("consumer of {subject}"), err))?;
    consumer
        .messages()
        .await
        .map_err(|err| ClusterError::js(format!("messages of {subject}"), err))
}

/// `Ok` when the pool's stream of threads exists or its existence cannot be told now.
async fn stream_exists(cluster: &Cluster) -> Result<(), ClusterError> {
    let name = cluster.layout().threads_stream();
    match cluster.js.get_stream(&name).await {
        Ok(_) => Ok(()),
        Err(err) => match stream_error(&name, err) {
            gone @ ClusterError::StreamGone { .. } => Err(gone),
            _ => Ok(()),
        },
    }
}

/// A failure to open the stream; `StreamGone` when the server says it does not exist (a
/// server that is restarting says something else, and the follower retries).
fn stream_error(stream: &str, err: async_nats::jetstream::context::GetStreamError) -> ClusterError {
    use async_nats::jetstream::context::GetStreamErrorKind;
    use async_nats::jetstream::ErrorCode;
    match err.kind() {
        GetStreamErrorKind::JetStream(js) if js.error_code() == ErrorCode::STREAM_NOT_FOUND => {
            ClusterError::StreamGone {
                stream: stream.to_string(),
            }
        }
        _ => ClusterError::js(format!("stream {stream}"), err),
    }
}

/// What the worker's key signs of a message on a thread's subject: the subject (thread and
/// pool), its kind, rollout path and part, the sequence of the signed message before it, and
/// its payload.
pub fn signed_fields<'a>(
    subject: &'a str,
    kind: Kind,
    rollout_path: &'a str,
    part: &'a str,
    previous: &'a str,
    payload: &'a [u8],
) -> [&'a [u8]; 6] {
    [
        subject.as_bytes(),
        kind.as_str().as_bytes(),
        rollout_path.as_bytes(),
        part.as_bytes(),
        previous.as_bytes(),
        payload,
    ]
}

/// `Ok` when `message` carries the worker's signature and names `last_signed` as the
/// message before it (a message replayed later names an older one).
pub fn check_signature(
    keys: &ThreadKeys,
    subject: &str,
    last_signed: u64,
    headers: Option<&async_nats::HeaderMap>,
    payload: &[u8],
) -> Result<(), String> {
    let header = |name: &str| {
        headers
            .and_then(|h| h.get(name))
            .map(|v| v.as_str().to_string())
    };
    let signature = header(SIGNATURE_HEADER).ok_or("not signed")?;
    let kind = header(KIND_HEADER)
        .as_deref()
        .and_then(Kind::parse)
        .ok_or("no valid kind")?;
    let previous = header(PREVIOUS_HEADER).ok_or("names no previous message")?;
    let rollout_path = header(ROLLOUT_HEADER).unwrap_or_default();
    let part = header(PART_HEADER).unwrap_or_default();
    let fields = signed_fields(subject, kind, &rollout_path, &part, &previous, payload);
    if !keys.verify(Side::Worker, &fields, &signature) {
        return Err("its signature is not the thread's worker's (forged)".into());
    }
    if previous != last_signed.to_string() {
        return Err(format!(
            "it follows message {previous}, not {last_signed} (replayed)"
        ));
    }
    Ok(())
}

fn parse(
    subject: &str,
    seq: u64,
    message: &async_nats::jetstream::Message,
) -> Result<ThreadMessage, ClusterError> {
    let header = |name: &str| {
        message
            .headers
            .as_ref()
            .and_then(|h| h.get(name))
            .map(|v| v.as_str().to_string())
    };
    let kind = header(KIND_HEADER)
        .as_deref()
        .and_then(Kind::parse)
        .ok_or_else(|| ClusterError::Malformed {
            subject: subject.to_string(),
            reason: format!("message {seq} has no valid {KIND_HEADER} header"),
        })?;
    let part = match header(PART_HEADER) {
        None => None,
        Some(text) => Some(parse_part(&text).ok_or_else(|| ClusterError::Malformed {
            subject: subject.to_string(),
            reason: format!("message {seq} has a bad {PART_HEADER} `{text}`"),
        })?),
    };
    Ok(ThreadMessage {
        seq,
        kind,
        payload: message.payload.clone(),
        rollout_path: header(ROLLOUT_HEADER),
        part,
    })
}

/// `k/n`.
pub fn parse_part(text: &str) -> Option<(usize, usize)> {
    let (k, n) = text.split_once('/')?;
    Some((k.trim().parse().ok()?, n.trim().parse().ok()?))
}

#[cfg(test)]
#[path = "follow_tests.rs"]
mod tests;
