//! `troupe mcp login`: discovery of the authorization server (RFC 9728 / 8414), dynamic
//! client registration (RFC 7591), then the authorization-code flow with PKCE (S256, done
//! by rmcp) whose redirect comes back to a loopback listener. The tokens land in the
//! credentials file through [`ServerCredentialStore`].

use super::callback::CallbackListener;
use super::store::{CredentialsFile, ServerCredentialStore, ServerKey};
use super::OAuthError;
use rmcp::transport::auth::AuthorizationManager;
use rmcp::transport::AuthError;
use std::time::Duration;

/// The client name sent at registration.
const CLIENT_NAME: &str = "Troupe";

/// What a login needs.
pub struct LoginRequest {
    pub server: ServerKey,
    /// Carries the server's configured headers (`http_headers`, `env_http_headers`).
    pub http_client: reqwest::Client,
    /// `--scopes`; when empty, the scopes the authorization server advertises.
    pub scopes: Vec<String>,
    pub credentials: CredentialsFile,
}

/// A login waiting for the user to authorize in the browser.
pub struct PendingLogin {
    manager: AuthorizationManager,
    listener: CallbackListener,
    authorization_url: String,
    state: String,
}

impl PendingLogin {
    /// Binds the callback listener, discovers the authorization server, registers a client
    /// and builds the URL the user must open.
    pub async fn start(request: LoginRequest) -> Result<Self, OAuthError> {
        let LoginRequest {
            server,
            http_client,
            scopes,
            credentials,
        } = request;
        let listener = CallbackListener::bind().await?;
        let redirect_uri = listener.redirect_uri();
        let mut manager = AuthorizationManager::new(server.url.as_str())
            .await
            .map_err(|err| auth_failed("cannot start the OAuth client", err))?;
        manager
            .with_client(http_client)
            .map_err(|err| auth_failed("cannot start the OAuth client", err))?;
        let metadata = match manager.discover_metadata().await {
            Ok(metadata) => metadata,
            Err(AuthError::NoAuthorizationSupport) => {
                return Err(OAuthError::NoAuthorizationServer {
                    url: server.url.clone(),
                })
            }
            Err(err) => return Err(auth_failed("OAuth discovery failed", err)),
        };
        let scopes = if scopes.is_empty() {
            metadata
                .scopes_supported
                .clone()
                .unwrap_or_default()
                .into_iter()
                .filter(|scope| !scope.trim().is_empty())
                .collect()
        } else {
            scopes
        };
        manager.set_metadata(metadata);
        manager.set_credential_store(ServerCredentialStore {
            file: credentials,
            server,
            requested_scopes: scopes.clone(),
        });
        manager
            .register_client(CLIENT_NAME, &redirect_uri)
            .await
            .map_err(|err| auth_failed("dynamic client registration failed", err))?;
        let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let authorization_url = manager
            .get_authorization_url(&scope_refs)
            .await
            .map_err(|err| auth_failed("cannot build the authorization URL", err))?;
        let state = url::Url::parse(&authorization_url)
            .ok()
            .and_then(|url| {
                url.query_pairs()
                    .find(|(key, _)| key == "state")
                    .map(|(_, value)| value.into_owned())
            })
            .ok_or_else(|| OAuthError::Flow("the authorization URL carries no state".into()))?;
        Ok(Self {
            manager,
            listener,
            authorization_url,
            state,
        })
    }

    /// The URL the user opens.
    pub fn authorization_url(&self) -> &str {
        &self.authorization_url
    }

    /// Waits (at most `timeout`) for the callback, exchanges the code (with the PKCE
    /// verifier) and stores the tokens.
    pub async fn finish(self, timeout: Duration) -> Result<(), OAuthError> {
        let code = self
            .listener
            .wait_for_code_within(&self.state, timeout)
            .await?;
        self.manager
            .exchange_code_for_token(&code, &self.state)
            .await
            .map_err(|err| auth_failed("the token exchange failed", err))?;
        Ok(())
    }
}

fn auth_failed(what: &str, err: AuthError) -> OAuthError {
    OAuthError::Flow(format!("{what}: {err}"))
}
