//! The HTTP client of a streamable-HTTP connection that uses stored OAuth tokens: it sends
//! the access token, refreshes it (and saves the new one) when it has expired or when the
//! server answers 401, and remembers a 401 it could not cure so the connection error can
//! say "log in" instead of a bare handshake failure.

use super::store::{now_millis, CredentialsFile, ServerCredentialStore, ServerKey, StoredTokens};
use super::OAuthError;
use futures::stream::BoxStream;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::AuthorizationManager;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use rmcp::transport::AuthError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A token this close to its expiry is refreshed before use (a request must not race it).
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);

type HttpError = StreamableHttpError<reqwest::Error>;

/// One server's stored tokens, shared by the transport's requests.
#[derive(Debug)]
pub struct OAuthSession {
    server: ServerKey,
    file: CredentialsFile,
    http_client: reqwest::Client,
    /// One refresh at a time: concurrent requests wait and reuse its result.
    refreshing: tokio::sync::Mutex<()>,
    /// Set when the server refused the request and no refresh could help.
    refused: AtomicBool,
}

impl OAuthSession {
    pub fn new(server: ServerKey, file: CredentialsFile, http_client: reqwest::Client) -> Self {
        Self {
            server,
            file,
            http_client,
            refreshing: tokio::sync::Mutex::new(()),
            refused: AtomicBool::new(false),
        }
    }

    /// Whether the server answered 401 and the stored tokens could not cure it.
    pub fn was_refused(&self) -> bool {
        self.refused.load(Ordering::Relaxed)
    }

    /// Whether tokens are stored for this server.
    pub fn has_tokens(&self) -> Result<bool, OAuthError> {
        Ok(self.file.load(&self.server)?.is_some())
    }

    /// The access token to send, refreshed first when it has expired; `None` when the
    /// server has no stored tokens (the request goes without, and a 401 says why).
    async fn access_token(&self) -> Result<Option<String>, AuthError> {
        let Some(tokens) = self.load()? else {
            return Ok(None);
        };
        if tokens.expires_within(EXPIRY_MARGIN, now_millis()) && tokens.refresh_token.is_some() {
            return self.refresh(&tokens.access_token).await.map(Some);
        }
        Ok(Some(tokens.access_token))
    }

    /// Refreshes unless another request already replaced `stale`; returns the new token.
    async fn refresh(&self, stale: &str) -> Result<String, AuthError> {
        let _one_at_a_time = self.refreshing.lock().await;
        let tokens = self.load()?.ok_or(AuthError::AuthorizationRequired)?;
        if tokens.access_token != stale && !tokens.expires_within(EXPIRY_MARGIN, now_millis()) {
            return Ok(tokens.access_token);
        }
        if tokens.refresh_token.is_none() {
            return Err(AuthError::TokenRefreshFailed(
                "no refresh token is stored".into(),
            ));
        }
        let mut manager = AuthorizationManager::new(self.server.url.as_str()).await?;
        manager.with_client(self.http_client.clone())?;
        let metadata = manager.discover_metadata().await?;
        manager.set_metadata(metadata);
        manager.configure_client_id(&tokens.client_id)?;
        manager.set_credential_store(ServerCredentialStore {
            file: self.file.clone(),
            server: self.server.clone(),
            requested_scopes: tokens.scopes.clone(),
        });
        let refreshed = manager.refresh_token().await?;
        tracing::info!(server = %self.server.name, "refreshed the MCP server's OAuth token");
        Ok(oauth2::TokenResponse::access_token(&refreshed)
            .secret()
            .clone())
    }

    fn load(&self) -> Result<Option<StoredTokens>, AuthError> {
        self.file
            .load(&self.server)
            .map_err(|err| AuthError::InternalError(err.to_string()))
    }
}

/// `reqwest::Client` plus the session's token on every request.
#[derive(Clone, Debug)]
pub struct OAuthHttpClient {
    pub inner: reqwest::Client,
    pub session: Arc<OAuthSession>,
}

impl StreamableHttpClient for OAuthHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let token = self.session.access_token().await?;
        let first = self
            .inner
            .post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token.clone(),
            )
            .await;
        let Err(StreamableHttpError::AuthRequired(refusal)) = first else {
            return first;
        };
        // A token the server no longer takes (revoked, or expired early): one refresh, one
        // retry; without stored tokens there is nothing to try.
        let Some(stale) = token else {
            self.session.refused.store(true, Ordering::Relaxed);
            return Err(StreamableHttpError::AuthRequired(refusal));
        };
        let fresh = match self.session.refresh(&stale).await {
            Ok(fresh) => fresh,
            Err(err) => {
                self.session.refused.store(true, Ordering::Relaxed);
                return Err(err.into());
            }
        };
        let retried = self
            .inner
            .post_message(uri, message, session_id, Some(fresh))
            .await;
        if matches!(retried, Err(StreamableHttpError::AuthRequired(_))) {
            self.session.refused.store(true, Ordering::Relaxed);
        }
        retried
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
    ) -> Result<(), HttpError> {
        let token = self.session.access_token().await?;
        self.inner.delete_session(uri, session_id, token).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, SseError>>, HttpError> {
        let token = self.session.access_token().await?;
        self.inner
            .get_stream(uri, session_id, last_event_id, token)
            .await
    }
}
