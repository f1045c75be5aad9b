//! `[cluster]`: how this machine reaches the NATS JetStream server of a worker pool
//! (`troupe worker`, `troupe exec --remote`). Checked and used by `troupe-cluster`.

use serde::Deserialize;
use std::path::PathBuf;

/// `[cluster]`; an unknown key is an error (a typo must not silently drop a credential).
#[derive(Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClusterToml {
    /// `nats://host:port` (`tls://` for TLS); `--nats URL` overrides it.
    pub nats_url: Option<String>,
    /// User and password the server asks for (both or neither).
    pub user: Option<String>,
    pub password: Option<String>,
    /// A file holding an NKey seed (`SU…`).
    pub nkey_seed_file: Option<PathBuf>,
    /// A `.creds` file (JWT and NKey seed).
    pub creds_file: Option<PathBuf>,
    /// Namespace of the pool's subjects, streams and key-value bucket (default `default`).
    pub pool: Option<String>,
    /// A worker whose lease is not renewed for this long loses its threads (default 5000).
    pub lease_timeout_ms: Option<u64>,
    /// A spawn request no worker takes within this fails (default 30000).
    pub spawn_deadline_ms: Option<u64>,
}

// By hand: the password must never reach a log line through `{:?}`.
impl std::fmt::Debug for ClusterToml {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterToml")
            .field("nats_url", &self.nats_url.as_ref().map(|_| "<set>"))
            .field("user", &self.user.as_ref().map(|_| "<set>"))
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("nkey_seed_file", &self.nkey_seed_file)
            .field("creds_file", &self.creds_file)
            .field("pool", &self.pool)
            .field("lease_timeout_ms", &self.lease_timeout_ms)
            .field("spawn_deadline_ms", &self.spawn_deadline_ms)
            .finish()
    }
}
