//! The connection to the pool's NATS server, from `[cluster]`, and the streams and bucket
//! of the pool (created when missing).

use crate::layout::Layout;
use crate::tls::TlsOptions;
use crate::ClusterError;
use async_nats::jetstream;
use async_nats::ConnectErrorKind;
use std::path::PathBuf;
use std::time::Duration;
use troupe_config::cluster::ClusterToml;

/// Default of `lease_timeout_ms`.
pub const DEFAULT_LEASE_TIMEOUT_MS: u64 = 5_000;
/// Default of `spawn_deadline_ms`.
pub const DEFAULT_SPAWN_DEADLINE_MS: u64 = 30_000;
/// How long the first connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How to authenticate; never printed.
#[derive(Clone)]
enum Auth {
    None,
    UserPassword(String, String),
    NkeySeedFile(PathBuf),
    CredsFile(PathBuf),
    Token(String),
}

/// `[cluster]`, checked.
#[derive(Clone)]
pub struct ClusterOptions {
    pub url: String,
    auth: Auth,
    pub(crate) tls: TlsOptions,
    pub layout: Layout,
    pub lease_timeout: Duration,
    pub spawn_deadline: Duration,
    /// `[cluster] allow_anonymous`: whether a server that lets anyone in may be joined.
    pub allow_anonymous: bool,
    /// `[cluster] worker_roots`: where a worker runs shared-workspace threads.
    pub worker_roots: Vec<PathBuf>,
}

impl std::fmt::Debug for ClusterOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterOptions")
            .field("url", &redact_url(&self.url))
            .field("tls", &self.tls)
            .field("layout", &self.layout)
            .field("lease_timeout", &self.lease_timeout)
            .field("spawn_deadline", &self.spawn_deadline)
            .field("allow_anonymous", &self.allow_anonymous)
            .field("worker_roots", &self.worker_roots)
            .finish_non_exhaustive()
    }
}

impl ClusterOptions {
    /// `[cluster]` with `url` (`--nats`) taking the place of `nats_url` when given.
    pub fn from_config(config: &ClusterToml, url: Option<&str>) -> Result<Self, ClusterError> {
        let url = url
            .map(str::to_string)
            .or_else(|| config.nats_url.clone())
            .ok_or_else(|| {
                ClusterError::Config(
                    "no NATS server: set `nats_url` in [cluster] or pass --nats URL".into(),
                )
            })?;
        let kinds = [
            config.user.is_some() || config.password.is_some(),
            config.nkey_seed_file.is_some(),
            config.creds_file.is_some(),
            config.token.is_some(),
        ];
        if kinds.iter().filter(|k| **k).count() > 1 {
            return Err(ClusterError::Config(
                "give one of user/password, nkey_seed_file, creds_file and token".into(),
            ));
        }
        let auth = match (
            &config.user,
            &config.password,
            &config.nkey_seed_file,
            &config.creds_file,
        ) {
            (Some(user), Some(password), _, _) => {
                Auth::UserPassword(user.clone(), password.clone())
            }
            (Some(_), None, _, _) | (None, Some(_), _, _) => {
                return Err(ClusterError::Config(
                    "`user` and `password` go together".into(),
                ))
            }
            (None, None, Some(seed), _) => Auth::NkeySeedFile(seed.clone()),
            (None, None, None, Some(creds)) => Auth::CredsFile(creds.clone()),
            (None, None, None, None) => match &config.token {
                Some(token) => Auth::Token(token.clone()),
                None => Auth::None,
            },
        };
        let positive = |key: &str, value: Option<u64>, default: u64| match value {
            Some(0) => Err(ClusterError::Config(format!("`{key}` must be positive"))),
            Some(ms) => Ok(Duration::from_millis(ms)),
            None => Ok(Duration::from_millis(default)),
        };
        Ok(Self {
            url,
            auth,
            tls: TlsOptions::from_config(config)?,
            layout: Layout::new(config.pool.as_deref().unwrap_or("default"))?,
            lease_timeout: positive(
                "lease_timeout_ms",
                config.lease_timeout_ms,
                DEFAULT_LEASE_TIMEOUT_MS,
            )?,
            spawn_deadline: positive(
                "spawn_deadline_ms",
                config.spawn_deadline_ms,
                DEFAULT_SPAWN_DEADLINE_MS,
            )?,
            allow_anonymous: config.allow_anonymous.unwrap_or(false),
            worker_roots: config.worker_roots.clone().unwrap_or_default(),
        })
    }
}

/// A connected process of the pool.
#[derive(Clone)]
pub struct Cluster {
    pub client: async_nats::Client,
    pub js: jetstream::Context,
    pub kv: jetstream::kv::Store,
    pub options: ClusterOptions,
    /// The server lets anyone in (joined only because `allow_anonymous` says so).
    pub anonymous: bool,
}

impl Cluster {
    /// Connects (once: an unreachable server is an error now, not a retry loop), then makes
    /// sure the pool's streams and bucket exist. After this, async-nats reconnects by itself.
    pub async fn connect(options: ClusterOptions, name: &str) -> Result<Self, ClusterError> {
        let url = redact_url(&options.url);
        let connect = match &options.auth {
            Auth::None => async_nats::ConnectOptions::new(),
            Auth::UserPassword(user, password) => {
                async_nats::ConnectOptions::with_user_and_password(user.clone(), password.clone())
            }
            Auth::NkeySeedFile(path) => {
                let seed =
                    std::fs::read_to_string(path).map_err(|err| ClusterError::CredentialsFile {
                        what: "nkey_seed_file",
                        path: path.display().to_string(),
                        reason: err.to_string(),
                    })?;
                async_nats::ConnectOptions::with_nkey(seed.trim().to_string())
            }
            Auth::Token(token) => async_nats::ConnectOptions::with_token(token.clone()),
            Auth::CredsFile(path) => async_nats::ConnectOptions::with_credentials_file(path)
                .await
                .map_err(|err| ClusterError::CredentialsFile {
                    what: "creds_file",
                    path: path.display().to_string(),
                    reason: err.to_string(),
                })?,
        };
        let client = options
            .tls
            .apply(connect)?
            .name(name)
            .connection_timeout(CONNECT_TIMEOUT)
            // Reconnects go on for as long as the process runs (a server restart is
            // survived); the first connection above is not retried.
            .max_reconnects(None)
            .connect(options.url.as_str())
            .await
            .map_err(|err| connect_error(url.clone(), &err))?;
        let anonymous = !crate::anonymous::server_authenticates(&client, &options).await;
        if anonymous && !options.allow_anonymous {
            return Err(ClusterError::Anonymous { url });
        }
        let js = jetstream::new(client.clone());
        let kv = ensure_layout(&js, &options.layout).await?;
        Ok(Self {
            client,
            js,
            kv,
            options,
            anonymous,
        })
    }

    pub fn layout(&self) -> &Layout {
        &self.options.layout
    }

    /// The warning every start on an anonymous server gives (`allow_anonymous = true`).
    pub fn anonymous_warning(&self) -> Option<String> {
        self.anonymous.then(|| {
            format!(
                "the NATS server at {} lets anyone in ([cluster] allow_anonymous = true): any \
                 process that reaches it can run work on this pool's workers and read or \
                 forge its threads; give the server users, nkeys or client certificates",
                redact_url(&self.options.url)
            )
        })
    }
}

/// Why the first connection to `url` (redacted) failed.
fn connect_error(url: String, err: &async_nats::ConnectError) -> ClusterError {
    // A failed handshake comes as an I/O error: told apart by the rustls error under it.
    if let Some(reason) = crate::tls::handshake_failure(err) {
        return ClusterError::Tls { url, reason };
    }
    match err.kind() {
        ConnectErrorKind::Authentication | ConnectErrorKind::AuthorizationViolation => {
            ClusterError::CredentialsRefused {
                url,
                reason: err.kind().to_string(),
            }
        }
        ConnectErrorKind::Tls => ClusterError::Tls {
            url,
            reason: err.to_string(),
        },
        ConnectErrorKind::ServerParse
        | ConnectErrorKind::Dns
        | ConnectErrorKind::TimedOut
        | ConnectErrorKind::Io
        | ConnectErrorKind::MaxReconnects => ClusterError::Unreachable {
            url,
            reason: err.to_string(),
        },
    }
}

/// Creates the pool's streams and bucket when missing.
async fn ensure_layout(
    js: &jetstream::Context,
    layout: &Layout,
) -> Result<jetstream::kv::Store, ClusterError> {
    use jetstream::stream::{Config, RetentionPolicy, StorageType};
    js.get_or_create_stream(Config {
        name: layout.spawn_stream(),
        subjects: vec![layout.spawn_subject()],
        retention: RetentionPolicy::WorkQueue,
        storage: StorageType::File,
        ..Config::default()
    })
    .await
    .map_err(|err| ClusterError::js(format!("stream {}", layout.spawn_stream()), missing(err)))?;
    js.get_or_create_stream(Config {
        name: layout.threads_stream(),
        subjects: vec![layout.threads_wildcard()],
        storage: StorageType::File,
        ..Config::default()
    })
    .await
    .map_err(|err| ClusterError::js(format!("stream {}", layout.threads_stream()), missing(err)))?;
    let bucket = layout.bucket();
    match js.get_key_value(bucket.clone()).await {
        Ok(kv) => Ok(kv),
        Err(_) => js
            .create_key_value(jetstream::kv::Config {
                bucket: bucket.clone(),
                history: 1,
                storage: StorageType::File,
                ..Default::default()
            })
            .await
            .map_err(|err| ClusterError::js(format!("bucket {bucket}"), missing(err))),
    }
}

/// Why the pool's layout could not be read or made, with what a requester (whose NATS user
/// may not create streams) should do.
fn missing(err: impl std::fmt::Display) -> String {
    format!(
        "{err} (if the pool is new: a `troupe worker` creates its streams and buckets when it \
         starts; requesters are not allowed to)"
    )
}

/// `url` with any `user:password@` taken out (error messages and logs never carry it).
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://<credentials>@{}", &url[..scheme], &url[at + 1..])
        }
        (None, Some(at)) => format!("<credentials>@{}", &url[at + 1..]),
        _ => url.to_string(),
    }
}

#[cfg(test)]
#[path = "connect_tests.rs"]
mod tests;
