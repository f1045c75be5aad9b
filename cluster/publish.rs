//! A worker's appends to one thread's subject, fenced twice: an append first renews the
//! thread's lease (compare-and-set on its revision) unless this worker renewed it less than
//! half a lease timeout ago, then publishes with the subject's last sequence this worker saw
//! as the expected one. A worker that lost the lease, or whose successor has appended since,
//! gets `Fenced` and must publish nothing more.
//!
//! Why a recent renewal is enough: another worker takes the lease over only after its
//! revision stood still for a whole lease timeout, counted from when it saw the renewal,
//! which the server wrote after this worker sent it. Within half a timeout of sending, no
//! takeover can have happened; a worker woken from SIGSTOP finds its renewal older than that
//! (its boot clock runs on while it is stopped or suspended) and renews, which fails once it was taken
//! over. Skipping the round trip halves the cost of an append in a burst (an interrupt's
//! abort is several).

use crate::lease::Lease;
use crate::sign::{Side, ThreadKeys, PREVIOUS_HEADER, SIGNATURE_HEADER};
use crate::wire::{Kind, KIND_HEADER, PART_HEADER, ROLLOUT_HEADER};
use crate::{Cluster, ClusterError};
use async_nats::jetstream::context::PublishErrorKind;
use async_nats::HeaderMap;

/// The appending side of one thread's subject.
pub struct ThreadPublisher {
    js: async_nats::jetstream::Context,
    client: async_nats::Client,
    subject: String,
    /// The pool's stream of threads (read when an append is refused).
    stream: String,
    lease: Lease,
    /// The subject's last sequence as this worker knows it (0: empty).
    last_seq: u64,
    /// Appends made, for the message ids that make a retried append land once.
    appended: u64,
    worker: String,
    /// How recent a renewal an append may rely on without renewing again.
    fresh_for: std::time::Duration,
    /// The thread's keys: every append is signed with the worker's.
    keys: ThreadKeys,
    /// The sequence of the last signed message of the thread (0: none), which the next
    /// append signs as its predecessor. Apart from `last_seq`: a worker taking over skips
    /// any unsigned message a forger slipped in after it.
    last_signed: u64,
}

impl ThreadPublisher {
    /// Appends to `thread`'s subject under `lease`, the subject's last sequence being
    /// `last_seq` and that of its last signed message `last_signed`.
    pub fn new(
        cluster: &Cluster,
        lease: Lease,
        worker: &str,
        (last_seq, last_signed): (u64, u64),
        keys: ThreadKeys,
    ) -> Result<Self, ClusterError> {
        Ok(Self {
            js: cluster.js.clone(),
            client: cluster.client.clone(),
            subject: cluster.layout().events_subject(lease.thread())?,
            stream: cluster.layout().threads_stream(),
            lease,
            last_seq,
            appended: 0,
            worker: worker.to_string(),
            fresh_for: cluster.options.lease_timeout / 2,
            keys,
            last_signed,
        })
    }

    /// Appends one message, retrying through a reconnect (the message id makes a retry of
    /// an append that did land a no-op) for up to `patience`; `Fenced` is final at once.
    pub async fn append_retrying(
        &mut self,
        kind: Kind,
        payload: Vec<u8>,
        rollout_path: Option<&str>,
        patience: std::time::Duration,
    ) -> Result<u64, ClusterError> {
        let deadline = tokio::time::Instant::now() + patience;
        let mut seq = 0;
        for (chunk, part) in split(payload, self.part_limit()) {
            seq = loop {
                match self
                    .append_part(kind, chunk.clone(), rollout_path, part)
                    .await
                {
                    Ok(seq) => break seq,
                    Err(
                        err @ (ClusterError::Fenced { .. }
                        | ClusterError::TooLarge { .. }
                        | ClusterError::StreamGone { .. }),
                    ) => return Err(err),
                    Err(err) if tokio::time::Instant::now() >= deadline => return Err(err),
                    Err(err) => {
                        tracing::debug!(%err, "append failed; retrying");
                        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                    }
                }
            };
        }
        Ok(seq)
    }

    /// Appends one message (in parts when it is larger than the server accepts), without
    /// retrying; the sequence of its last part.
    pub async fn append(
        &mut self,
        kind: Kind,
        payload: Vec<u8>,
        rollout_path: Option<&str>,
    ) -> Result<u64, ClusterError> {
        let mut seq = 0;
        for (chunk, part) in split(payload, self.part_limit()) {
            seq = self.append_part(kind, chunk, rollout_path, part).await?;
        }
        Ok(seq)
    }

    /// The largest part this server takes, leaving room for the headers.
    fn part_limit(&self) -> usize {
        self.client
            .server_info()
            .max_payload
            .saturating_sub(HEADER_ROOM)
            .max(MIN_PART)
    }

    async fn append_part(
        &mut self,
        kind: Kind,
        payload: Vec<u8>,
        rollout_path: Option<&str>,
        part: Option<(usize, usize)>,
    ) -> Result<u64, ClusterError> {
        match self
            .append_once(kind, payload.clone(), rollout_path, part)
            .await
        {
            Err(ClusterError::Fenced { .. }) => {
                // Someone appended since: a worker that took the thread over (its lease
                // moved, or its message is signed) stops this one; anything else was
                // forged by a client without the thread's secret and is stepped over.
                self.step_over_forgeries().await?;
                self.append_once(kind, payload, rollout_path, part).await
            }
            other => other,
        }
    }

    /// After a refused append: `Fenced` unless the lease is still this worker's and every
    /// message after its last one is unsigned or forged; then the next append follows
    /// the subject's last message, and still signs this worker's last one as its
    /// predecessor (as the followers, which drop the forged ones, expect).
    async fn step_over_forgeries(&mut self) -> Result<(), ClusterError> {
        self.lease.renew().await?;
        let fenced = || ClusterError::Fenced {
            thread: self.lease.thread().to_string(),
        };
        let stream = self
            .js
            .get_stream(self.stream.clone())
            .await
            .map_err(|err| ClusterError::js(format!("stream {}", self.stream), err))?;
        let mut next = self.last_seq + 1;
        let mut last = self.last_seq;
        loop {
            let message = match stream
                .get_first_raw_message_by_subject(&self.subject, next)
                .await
            {
                Ok(message) => message,
                Err(err)
                    if matches!(
                        err.kind(),
                        async_nats::jetstream::stream::LastRawMessageErrorKind::NoMessageFound
                    ) =>
                {
                    break
                }
                Err(err) => return Err(ClusterError::js(format!("read of {}", self.subject), err)),
            };
            let signed = crate::follow::check_signature(
                &self.keys,
                &self.subject,
                self.last_signed,
                Some(&message.headers),
                &message.payload,
            );
            if signed.is_ok() {
                return Err(fenced());
            }
            tracing::warn!(subject = %self.subject, seq = message.sequence, "stepped over a forged message");
            last = message.sequence;
            next = message.sequence + 1;
        }
        if last == self.last_seq {
            return Err(fenced());
        }
        self.last_seq = last;
        Ok(())
    }

    async fn append_once(
        &mut self,
        kind: Kind,
        payload: Vec<u8>,
        rollout_path: Option<&str>,
        part: Option<(usize, usize)>,
    ) -> Result<u64, ClusterError> {
        if !self.lease.renewed_within(self.fresh_for) {
            self.lease.renew().await?;
        }
        let mut headers = HeaderMap::new();
        headers.insert(KIND_HEADER, kind.as_str());
        headers.insert(
            async_nats::header::NATS_EXPECTED_LAST_SUBJECT_SEQUENCE,
            self.last_seq.to_string().as_str(),
        );
        if let Some(path) = rollout_path {
            headers.insert(ROLLOUT_HEADER, path);
        }
        let part_text = part.map(|(k, n)| format!("{k}/{n}")).unwrap_or_default();
        if part.is_some() {
            headers.insert(PART_HEADER, part_text.as_str());
        }
        let previous = self.last_signed.to_string();
        let signature = self.keys.sign(
            Side::Worker,
            &crate::follow::signed_fields(
                &self.subject,
                kind,
                rollout_path.unwrap_or(""),
                &part_text,
                &previous,
                &payload,
            ),
        );
        headers.insert(PREVIOUS_HEADER, previous.as_str());
        headers.insert(SIGNATURE_HEADER, signature.as_str());
        // The same id on a retry: the server keeps one copy (its duplicate window).
        let id = format!(
            "{}:{}:{}",
            self.lease.thread(),
            self.worker,
            self.appended + 1
        );
        headers.insert(async_nats::header::NATS_MESSAGE_ID, id.as_str());
        let ack = self
            .js
            .publish_with_headers(self.subject.clone(), headers, payload.into())
            .await
            .map_err(|err| self.publish_error(err))?
            .await
            .map_err(|err| self.publish_error(err))?;
        self.last_seq = ack.sequence;
        self.last_signed = ack.sequence;
        self.appended += 1;
        Ok(ack.sequence)
    }

    /// Renews the lease without appending (the heartbeat of a quiet thread).
    pub async fn heartbeat(&mut self) -> Result<(), ClusterError> {
        self.lease.renew().await
    }

    pub fn thread(&self) -> &str {
        self.lease.thread()
    }

    /// The thread is finished: the lease goes.
    pub async fn finish(self) {
        self.lease.release().await;
    }

    fn publish_error(&self, err: async_nats::jetstream::context::PublishError) -> ClusterError {
        match err.kind() {
            PublishErrorKind::WrongLastSequence => ClusterError::Fenced {
                thread: self.lease.thread().to_string(),
            },
            PublishErrorKind::StreamNotFound => ClusterError::StreamGone {
                stream: self.subject.clone(),
            },
            PublishErrorKind::MaxPayloadExceeded => ClusterError::TooLarge {
                subject: self.subject.clone(),
                reason: err.to_string(),
            },
            _ => ClusterError::js(format!("publish to {}", self.subject), err),
        }
    }
}

/// `(k, n)`: part k (1-based) of n.
pub type Part = (usize, usize);

/// Room left in each message for its headers.
const HEADER_ROOM: usize = 4096;
/// The smallest part (a server with a tiny `max_payload` still gets progress).
const MIN_PART: usize = 1024;

/// `payload` in parts of at most `limit` bytes, each with its `(k, n)` (1-based); a payload
/// that fits is one message without a part number.
pub fn split(payload: Vec<u8>, limit: usize) -> Vec<(Vec<u8>, Option<Part>)> {
    if payload.len() <= limit || limit == 0 {
        return vec![(payload, None)];
    }
    let chunks: Vec<Vec<u8>> = payload.chunks(limit).map(<[u8]>::to_vec).collect();
    let n = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| (chunk, Some((i + 1, n))))
        .collect()
}

#[cfg(test)]
#[path = "publish_tests.rs"]
mod tests;
