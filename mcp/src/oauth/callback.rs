//! The loopback listener the browser is redirected to after the user authorizes: it takes
//! the first `/callback` request whose `state` is the one this login sent, and refuses the
//! others (a forged or stale callback must neither end nor complete the login).

use super::OAuthError;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The path of the redirect URI.
pub const CALLBACK_PATH: &str = "/callback";
/// A request head longer than this is refused (nothing legitimate comes close).
const MAX_REQUEST_HEAD: usize = 16 * 1024;
/// How long one connection may take to send its request line and headers.
const REQUEST_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// What one request to the listener carried.
#[derive(Debug, PartialEq, Eq)]
pub enum CallbackOutcome {
    /// The authorization code, with the state it came with.
    Code { code: String, state: String },
    /// The provider refused (`error`, `error_description`).
    ProviderError {
        error: Option<String>,
        description: Option<String>,
    },
    /// Not a callback at all (wrong path, no parameters).
    Invalid,
}

/// Reads the callback out of a request target (`/callback?code=…&state=…`).
pub fn parse_callback(target: &str) -> CallbackOutcome {
    let Some((path, query)) = target.split_once('?') else {
        return CallbackOutcome::Invalid;
    };
    if path != CALLBACK_PATH {
        return CallbackOutcome::Invalid;
    }
    let (mut code, mut state, mut error, mut description) = (None, None, None, None);
    for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
        let value = Some(value.into_owned());
        match key.as_ref() {
            "code" => code = value,
            "state" => state = value,
            "error" => error = value,
            "error_description" => description = value,
            _ => {}
        }
    }
    match (code, state) {
        (Some(code), Some(state)) => CallbackOutcome::Code { code, state },
        _ if error.is_some() || description.is_some() => {
            CallbackOutcome::ProviderError { error, description }
        }
        _ => CallbackOutcome::Invalid,
    }
}

/// The listener on 127.0.0.1 (a port the system picks).
pub struct CallbackListener {
    listener: TcpListener,
    port: u16,
}

impl CallbackListener {
    pub async fn bind() -> Result<Self, OAuthError> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(OAuthError::CallbackListener)?;
        let port = listener
            .local_addr()
            .map_err(OAuthError::CallbackListener)?
            .port();
        Ok(Self { listener, port })
    }

    /// The redirect URI registered with the authorization server.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    /// [`Self::wait_for_code`], given up after `timeout`.
    pub async fn wait_for_code_within(
        &self,
        expected_state: &str,
        timeout: Duration,
    ) -> Result<String, OAuthError> {
        tokio::time::timeout(timeout, self.wait_for_code(expected_state))
            .await
            .map_err(|_| OAuthError::CallbackTimeout {
                seconds: timeout.as_secs(),
            })?
    }

    /// Waits for the callback that carries `expected_state`; answers every request.
    pub async fn wait_for_code(&self, expected_state: &str) -> Result<String, OAuthError> {
        loop {
            let (mut stream, _) = self
                .listener
                .accept()
                .await
                .map_err(OAuthError::CallbackListener)?;
            let target =
                match tokio::time::timeout(REQUEST_READ_TIMEOUT, read_target(&mut stream)).await {
                    Ok(Some(target)) => target,
                    Ok(None) | Err(_) => {
                        respond(&mut stream, 400, "Invalid OAuth callback").await;
                        continue;
                    }
                };
            match parse_callback(&target) {
                CallbackOutcome::Code { code, state } if state == expected_state => {
                    respond(
                        &mut stream,
                        200,
                        "Authentication complete. You may close this window.",
                    )
                    .await;
                    return Ok(code);
                }
                CallbackOutcome::Code { .. } => {
                    tracing::warn!("refused an OAuth callback whose state is not this login's");
                    respond(
                        &mut stream,
                        400,
                        "OAuth callback refused: its state does not match this login.",
                    )
                    .await;
                }
                CallbackOutcome::ProviderError { error, description } => {
                    let refused = OAuthError::Provider { error, description };
                    respond(&mut stream, 400, &refused.to_string()).await;
                    return Err(refused);
                }
                CallbackOutcome::Invalid => {
                    respond(&mut stream, 400, "Invalid OAuth callback").await;
                }
            }
        }
    }
}

/// The request target of a `GET`, once the whole head has arrived.
async fn read_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() > MAX_REQUEST_HEAD {
            return None;
        }
        let read = stream.read(&mut buf).await.ok()?;
        if read == 0 {
            return None;
        }
        head.extend_from_slice(&buf[..read]);
    }
    let head = String::from_utf8_lossy(&head);
    let mut parts = head.lines().next()?.split(' ');
    match (parts.next(), parts.next()) {
        (Some("GET"), Some(target)) => Some(target.to_string()),
        _ => None,
    }
}

async fn respond(stream: &mut TcpStream, status: u16, body: &str) {
    let reason = if status == 200 { "OK" } else { "Bad Request" };
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    // The browser going away before the answer changes nothing for the login.
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

#[cfg(test)]
#[path = "callback_tests.rs"]
mod tests;
