//! `$TROUPE_HOME/.credentials.json`: the OAuth tokens `troupe mcp login` obtained, one entry
//! per (server name, URL). The file is only ever replaced whole (a 0600 temporary file
//! beside it, renamed over), so it is never half written nor readable by others.

use super::OAuthError;
use oauth2::basic::BasicTokenType;
use oauth2::{AccessToken, EmptyExtraTokenFields, RefreshToken, Scope, TokenResponse};
use rmcp::transport::auth::{AuthError, CredentialStore, OAuthTokenResponse, StoredCredentials};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Serializes the read-modify-write of the file within this process (two servers may
/// refresh at once); the rename keeps other processes from seeing a partial file.
static FILE_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
/// Makes each temporary file name unique within the process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// One server's tokens as stored. `Debug` leaves the secrets out.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredTokens {
    pub server_name: String,
    pub server_url: String,
    pub client_id: String,
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires, in milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    #[serde(default)]
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for StoredTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredTokens")
            .field("server_name", &self.server_name)
            .field("server_url", &self.server_url)
            .field("client_id", &self.client_id)
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl StoredTokens {
    /// Whether the access token has expired, or will within `margin`.
    pub fn expires_within(&self, margin: Duration, now_ms: u64) -> bool {
        let margin_ms = u64::try_from(margin.as_millis()).unwrap_or(u64::MAX);
        self.expires_at
            .is_some_and(|at| at <= now_ms.saturating_add(margin_ms))
    }

    /// rmcp's token type, its `expires_in` counted from `now_ms` (zero once expired, which
    /// is what makes rmcp refresh it).
    pub fn to_token_response(&self, now_ms: u64) -> OAuthTokenResponse {
        let mut response = OAuthTokenResponse::new(
            AccessToken::new(self.access_token.clone()),
            BasicTokenType::Bearer,
            EmptyExtraTokenFields {},
        );
        response.set_refresh_token(self.refresh_token.clone().map(RefreshToken::new));
        let expires_in = self
            .expires_at
            .map(|at| Duration::from_millis(at.saturating_sub(now_ms)));
        response.set_expires_in(expires_in.as_ref());
        if !self.scopes.is_empty() {
            response.set_scopes(Some(self.scopes.iter().cloned().map(Scope::new).collect()));
        }
        response
    }

    /// The entry for a token response received at `now_ms`. A refresh answer may omit the
    /// refresh token (RFC 6749 §6) or the scopes: then those of `previous` are kept.
    pub fn from_token_response(
        server: &ServerKey,
        client_id: String,
        response: &OAuthTokenResponse,
        requested_scopes: &[String],
        previous: Option<&StoredTokens>,
        now_ms: u64,
    ) -> Self {
        let scopes = match response.scopes() {
            Some(granted) => granted.iter().map(|s| s.to_string()).collect(),
            None => previous
                .map(|p| p.scopes.clone())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| requested_scopes.to_vec()),
        };
        Self {
            server_name: server.name.clone(),
            server_url: server.url.clone(),
            client_id,
            access_token: response.access_token().secret().clone(),
            refresh_token: response
                .refresh_token()
                .map(|t| t.secret().clone())
                .or_else(|| previous.and_then(|p| p.refresh_token.clone())),
            expires_at: response
                .expires_in()
                .map(|d| now_ms.saturating_add(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))),
            scopes,
        }
    }
}

/// Which server an entry belongs to: tokens obtained for one URL are never sent to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerKey {
    pub name: String,
    pub url: String,
}

impl ServerKey {
    pub fn new(name: &str, url: &str) -> Self {
        Self {
            name: name.to_string(),
            url: url.to_string(),
        }
    }

    fn entry_key(&self) -> String {
        format!("{}|{}", self.name, self.url)
    }
}

/// The credentials file.
#[derive(Debug, Clone)]
pub struct CredentialsFile {
    path: PathBuf,
}

impl CredentialsFile {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The tokens stored for `server`, if any.
    pub fn load(&self, server: &ServerKey) -> Result<Option<StoredTokens>, OAuthError> {
        let _guard = FILE_LOCK
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(self.read_all()?.remove(&server.entry_key()))
    }

    /// Stores (or replaces) the tokens of their server.
    pub fn save(&self, tokens: &StoredTokens) -> Result<(), OAuthError> {
        let _guard = FILE_LOCK
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut all = self.read_all()?;
        let key = ServerKey::new(&tokens.server_name, &tokens.server_url).entry_key();
        all.insert(key, tokens.clone());
        self.write_all(&all)
    }

    /// Removes the tokens of `server`; `Ok(false)` when there were none.
    pub fn remove(&self, server: &ServerKey) -> Result<bool, OAuthError> {
        let _guard = FILE_LOCK
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut all = self.read_all()?;
        if all.remove(&server.entry_key()).is_none() {
            return Ok(false);
        }
        self.write_all(&all)?;
        Ok(true)
    }

    fn read_all(&self) -> Result<BTreeMap<String, StoredTokens>, OAuthError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(err) => {
                return Err(OAuthError::BadCredentialsFile {
                    path: self.path.clone(),
                    reason: err.to_string(),
                })
            }
        };
        // The position only: serde's message could quote part of a token.
        serde_json::from_str(&text).map_err(|err| OAuthError::BadCredentialsFile {
            path: self.path.clone(),
            reason: format!(
                "not a JSON object of stored tokens (line {}, column {})",
                err.line(),
                err.column()
            ),
        })
    }

    fn write_all(&self, all: &BTreeMap<String, StoredTokens>) -> Result<(), OAuthError> {
        use std::os::unix::fs::OpenOptionsExt;
        let failed = |source| OAuthError::WriteCredentialsFile {
            path: self.path.clone(),
            source,
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(failed)?;
        let file_name = self
            .path
            .file_name()
            .map_or_else(|| "credentials".into(), |n| n.to_string_lossy());
        let temp = dir.join(format!(
            ".{file_name}.{}.{}.tmp",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let text =
            serde_json::to_string_pretty(all).map_err(|e| failed(std::io::Error::other(e)))?;
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)
            .and_then(|mut file| {
                file.write_all(text.as_bytes())?;
                file.write_all(b"\n")?;
                file.sync_all()
            })
            .and_then(|()| std::fs::rename(&temp, &self.path));
        if let Err(err) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(failed(err));
        }
        Ok(())
    }
}

/// rmcp's view of one server's entry: what its `AuthorizationManager` loads, and saves
/// after a code exchange or a refresh.
#[derive(Debug, Clone)]
pub struct ServerCredentialStore {
    pub file: CredentialsFile,
    pub server: ServerKey,
    /// Recorded when the token response does not say which scopes it grants.
    pub requested_scopes: Vec<String>,
}

fn store_error(err: OAuthError) -> AuthError {
    AuthError::InternalError(err.to_string())
}

#[async_trait::async_trait]
impl CredentialStore for ServerCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let stored = self.file.load(&self.server).map_err(store_error)?;
        Ok(stored.map(|tokens| StoredCredentials {
            client_id: tokens.client_id.clone(),
            token_response: Some(tokens.to_token_response(now_millis())),
        }))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let Some(response) = credentials.token_response else {
            return Ok(());
        };
        let previous = self.file.load(&self.server).map_err(store_error)?;
        let tokens = StoredTokens::from_token_response(
            &self.server,
            credentials.client_id,
            &response,
            &self.requested_scopes,
            previous.as_ref(),
            now_millis(),
        );
        self.file.save(&tokens).map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.file
            .remove(&self.server)
            .map(|_| ())
            .map_err(store_error)
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
