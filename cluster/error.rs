//! What can go wrong between a process and the pool. No variant carries a credential.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum ClusterError {
    #[error("[cluster]: {0}")]
    Config(String),
    #[error("cannot reach the NATS server at {url}: {reason}")]
    Unreachable { url: String, reason: String },
    /// No TLS session with the server: its certificate is not trusted (a private CA not in
    /// `tls_ca_file`), it asked for a client certificate, or it speaks no TLS.
    #[error("TLS with the NATS server at {url} failed: {reason}")]
    Tls { url: String, reason: String },
    #[error("the NATS server at {url} refused the credentials ({reason})")]
    CredentialsRefused { url: String, reason: String },
    /// The server asks no credentials and no client certificate of anyone.
    #[error(
        "the NATS server at {url} lets anyone in (no credentials, no client certificate \
         asked for): refused, since any process that reaches it could run work on the pool \
         and forge its threads. Start nats-server with users, nkeys or --tlsverify and set \
         them in [cluster], or set [cluster] allow_anonymous = true to accept the risk"
    )]
    Anonymous { url: String },
    #[error("cannot read {what} {path}: {reason}")]
    CredentialsFile {
        what: &'static str,
        path: String,
        reason: String,
    },
    #[error("JetStream {what}: {reason}")]
    JetStream { what: String, reason: String },
    #[error("no worker took the spawn request within {deadline_ms} ms (is a `troupe worker` running for pool `{pool}` with a free slot?)")]
    SpawnDeadline { deadline_ms: u64, pool: String },
    /// This process no longer holds the thread's lease: it must publish nothing more for it.
    #[error("lost the lease of thread {thread}: another worker owns it now")]
    Fenced { thread: String },
    #[error("a message on {subject} is malformed: {reason}")]
    Malformed { subject: String, reason: String },
    /// The message is larger than the server's `max_payload`: refused, never sent.
    #[error("a message for {subject} is larger than the server accepts: {reason}")]
    TooLarge { subject: String, reason: String },
    /// The pool's stream of threads was deleted: nothing can be read or committed.
    #[error("the stream {stream} was deleted under the running thread; its events are gone")]
    StreamGone { stream: String },
    #[error("worker {worker} could not start the thread: {reason}")]
    SpawnRefused { worker: String, reason: String },
    #[error("the thread's worker did not answer: {0}")]
    NoReply(String),
    /// The worker answered a request to a thread with a refusal.
    #[error("the thread's worker refused: {0}")]
    Refused(String),
    #[error("cannot mirror the remote rollout {path}: {reason}")]
    Mirror { path: String, reason: String },
}

impl ClusterError {
    /// A JetStream failure of `what`.
    pub fn js(what: impl Into<String>, err: impl std::fmt::Display) -> Self {
        Self::JetStream {
            what: what.into(),
            reason: err.to_string(),
        }
    }
}
