//! `[cluster]`: how this machine reaches the NATS JetStream server of a worker pool
//! (`troupe worker`, `troupe exec --remote`, `spawn_agent {placement}`). Here (not in
//! `troupe-config`) because a thread's settings carry it to `spawn_agent`; it is never
//! serialized into a rollout (it may hold a password).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `[cluster]`; an unknown key is an error (a typo must not silently drop a credential).
#[derive(Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClusterConfig {
    /// `nats://host:port` (`tls://` for TLS); `--nats URL` overrides it.
    pub nats_url: Option<String>,
    /// User and password the server asks for (both or neither).
    pub user: Option<String>,
    pub password: Option<String>,
    /// A file holding an NKey seed (`SU…`).
    pub nkey_seed_file: Option<PathBuf>,
    /// A `.creds` file (JWT and NKey seed).
    pub creds_file: Option<PathBuf>,
    /// A token the server asks for.
    pub token: Option<String>,
    /// `true`: join a server that lets anyone in (no credentials, no client certificate
    /// asked for), with a warning on every start. Default `false`: such a server is refused,
    /// since anyone who can reach it could run work on this pool's workers.
    pub allow_anonymous: Option<bool>,
    /// On a worker: the directories a shared-workspace thread may work in (itself or
    /// below, symlinks resolved). Empty or unset: no shared-workspace request is run
    /// (git workspaces, checked out under the worker's home, always are).
    pub worker_roots: Option<Vec<PathBuf>>,
    /// PEM certificates of the CA(s) that signed the server's certificate (a private CA);
    /// without it the system's roots are used.
    pub tls_ca_file: Option<PathBuf>,
    /// A PEM client certificate, for a server that verifies clients (with `tls_key_file`).
    pub tls_cert_file: Option<PathBuf>,
    /// The PEM private key of `tls_cert_file`.
    pub tls_key_file: Option<PathBuf>,
    /// `true`: connect only over TLS, even to a `nats://` URL whose server does not ask
    /// for it (default: TLS when the URL is `tls://` or the server requires it).
    pub tls_required: Option<bool>,
    /// Namespace of the pool's subjects, streams and key-value bucket (default `default`).
    pub pool: Option<String>,
    /// A worker whose lease is not renewed for this long loses its threads (default 5000).
    pub lease_timeout_ms: Option<u64>,
    /// A spawn request no worker takes within this fails (default 30000).
    pub spawn_deadline_ms: Option<u64>,
    /// Where `spawn_agent` places a sub-agent when the call does not say (default `local`).
    pub placement: Option<Placement>,
    /// How a remote thread gets its working directory (default `shared`).
    pub workspace: Option<Workspace>,
    /// With `workspace = "git"`: the remote (a remote name of the requester's repository,
    /// or a URL or path) the base commit is pushed to and the result fetched from (default
    /// `origin`).
    pub git_remote: Option<GitRemote>,
}

impl ClusterConfig {
    /// Whether a pool is configured (`nats_url` set): only then is `placement` offered.
    pub fn configured(&self) -> bool {
        self.nats_url.is_some()
    }
}

// By hand: the password must never reach a log line through `{:?}`.
impl std::fmt::Debug for ClusterConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterConfig")
            .field("nats_url", &self.nats_url.as_ref().map(|_| "<set>"))
            .field("user", &self.user.as_ref().map(|_| "<set>"))
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("nkey_seed_file", &self.nkey_seed_file)
            .field("creds_file", &self.creds_file)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("allow_anonymous", &self.allow_anonymous)
            .field("worker_roots", &self.worker_roots)
            .field("tls_ca_file", &self.tls_ca_file)
            .field("tls_cert_file", &self.tls_cert_file)
            .field("tls_key_file", &self.tls_key_file)
            .field("tls_required", &self.tls_required)
            .field("pool", &self.pool)
            .field("lease_timeout_ms", &self.lease_timeout_ms)
            .field("spawn_deadline_ms", &self.spawn_deadline_ms)
            .field("placement", &self.placement)
            .field("workspace", &self.workspace)
            .field("git_remote", &self.git_remote)
            .finish()
    }
}

/// Where a sub-agent runs (`spawn_agent {placement}`, `[cluster] placement`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// In this process, as a session of its own.
    #[default]
    Local,
    /// On a worker of the pool (`[cluster] nats_url`).
    Remote,
    /// Here while this tree has a free local slot (`[agents] max_threads`), else remote.
    Auto,
}

impl Placement {
    pub fn as_str(self) -> &'static str {
        match self {
            Placement::Local => "local",
            Placement::Remote => "remote",
            Placement::Auto => "auto",
        }
    }

    /// `local`, `remote` or `auto`.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "local" => Some(Placement::Local),
            "remote" => Some(Placement::Remote),
            "auto" => Some(Placement::Auto),
            _ => None,
        }
    }
}

/// How a remote thread (`exec --remote`, a remote `spawn_agent`) gets its workspace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Workspace {
    /// The requester's directory, as a path the workers share (same machine or a shared
    /// file system).
    #[default]
    Shared,
    /// The requester's HEAD commit, pushed to `git_remote`; the worker checks it out in a
    /// worktree of its own and pushes its work back as a branch.
    Git,
}

impl Workspace {
    pub fn as_str(self) -> &'static str {
        match self {
            Workspace::Shared => "shared",
            Workspace::Git => "git",
        }
    }
}

/// `[cluster] git_remote`: a remote name or a URL/path; never empty, never starting with
/// `-` (it is handed to `git`, which would read it as an option).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct GitRemote(String);

impl GitRemote {
    /// The remote every repository has after `git clone`.
    pub const DEFAULT: &'static str = "origin";

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for GitRemote {
    fn default() -> Self {
        Self(Self::DEFAULT.to_string())
    }
}

impl TryFrom<String> for GitRemote {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(
                "`git_remote` is empty: give a remote name (e.g. `origin`) or a URL".into(),
            );
        }
        if trimmed.starts_with('-') {
            return Err(format!(
                "`git_remote` `{trimmed}` starts with `-`: give a remote name or a URL"
            ));
        }
        Ok(Self(trimmed.to_string()))
    }
}

impl From<GitRemote> for String {
    fn from(remote: GitRemote) -> String {
        remote.0
    }
}
