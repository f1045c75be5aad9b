//! A loopback OAuth-protected MCP server for the `troupe mcp login` tests: protected-resource
//! metadata (RFC 9728), authorization-server metadata (RFC 8414), dynamic registration
//! (RFC 7591), an authorize endpoint that redirects at once (the test plays the browser), a
//! token endpoint that checks the PKCE verifier (S256), and a streamable-HTTP MCP endpoint
//! (JSON responses) that requires a bearer token it issued.

use axum::extract::{Form, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// The one tool the MCP endpoint offers; its answer names the caller.
pub const TOOL: &str = "whoami";
/// What the tool answers, before the caller's user name.
pub const TOOL_ANSWER: &str = "OAuth-protected answer for";

#[derive(Default)]
struct Inner {
    /// client_id → registered redirect URIs.
    clients: HashMap<String, Vec<String>>,
    /// code → (client_id, redirect_uri, PKCE challenge, scope).
    codes: HashMap<String, (String, String, String, String)>,
    /// Access tokens currently honoured.
    access_tokens: Vec<String>,
    /// Every access token ever issued, in order.
    issued: Vec<String>,
    refresh_tokens: HashMap<String, String>,
    /// `expires_in` of the tokens the code exchange issues.
    login_expires_in: u64,
    refreshes: usize,
    /// Bearer tokens of the MCP requests that were let through.
    mcp_tokens: Vec<String>,
    counter: usize,
}

/// The running server; stops when dropped.
pub struct OAuthMcpServer {
    pub base_url: String,
    state: Arc<Mutex<Inner>>,
    runtime: tokio::runtime::Runtime,
}

impl OAuthMcpServer {
    /// Starts the server; tokens from the code exchange expire after `login_expires_in`
    /// seconds, refreshed ones after an hour.
    pub fn start(login_expires_in: u64) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(Mutex::new(Inner {
            login_expires_in,
            ..Inner::default()
        }));
        let shared = Shared {
            base_url: base_url.clone(),
            inner: state.clone(),
        };
        let app = Router::new()
            .route(
                "/.well-known/oauth-protected-resource/mcp",
                get(resource_metadata),
            )
            .route(
                "/.well-known/oauth-authorization-server",
                get(authorization_server_metadata),
            )
            .route("/register", post(register))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .route("/mcp", post(mcp_post).get(mcp_get).delete(mcp_delete))
            .with_state(shared);
        runtime.spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            base_url,
            state,
            runtime,
        }
    }

    /// The URL configured as the server's `url`.
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base_url)
    }

    /// Every access token issued so far.
    pub fn issued_tokens(&self) -> Vec<String> {
        self.lock().issued.clone()
    }

    /// Bearer tokens of the MCP requests let through.
    pub fn mcp_tokens(&self) -> Vec<String> {
        self.lock().mcp_tokens.clone()
    }

    pub fn refreshes(&self) -> usize {
        self.lock().refreshes
    }

    /// Stops honouring every access token issued so far (a revocation): the next request
    /// gets a 401, which a refresh cures.
    pub fn revoke_access_tokens(&self) {
        self.lock().access_tokens.clear();
    }

    /// Plays the browser: opens `authorization_url` without following the redirect, then
    /// opens the callback it points to with its `state` replaced by `forged_state` when
    /// given. Returns the callback's status and body.
    pub fn play_browser(
        &self,
        authorization_url: &str,
        forged_state: Option<&str>,
    ) -> (u16, String) {
        self.runtime.block_on(async {
            let client = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap();
            let redirect = client.get(authorization_url).send().await.unwrap();
            assert_eq!(redirect.status(), 302, "the authorize endpoint redirects");
            let location = redirect.headers()[header::LOCATION].to_str().unwrap();
            let mut callback = url::Url::parse(location).unwrap();
            if let Some(forged) = forged_state {
                let pairs: Vec<(String, String)> = callback
                    .query_pairs()
                    .map(|(k, v)| {
                        let v = if k == "state" {
                            forged.to_string()
                        } else {
                            v.into_owned()
                        };
                        (k.into_owned(), v)
                    })
                    .collect();
                callback.query_pairs_mut().clear().extend_pairs(pairs);
            }
            let answer = client.get(callback).send().await.unwrap();
            let status = answer.status().as_u16();
            (status, answer.text().await.unwrap())
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.state.lock().unwrap()
    }
}

#[derive(Clone)]
struct Shared {
    base_url: String,
    inner: Arc<Mutex<Inner>>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap()
    }
}

async fn resource_metadata(State(s): State<Shared>) -> Json<Value> {
    Json(json!({
        "resource": format!("{}/mcp", s.base_url),
        "authorization_servers": [s.base_url],
    }))
}

async fn authorization_server_metadata(State(s): State<Shared>) -> Json<Value> {
    let base = &s.base_url;
    Json(json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "scopes_supported": ["tools.read"],
    }))
}

async fn register(State(s): State<Shared>, Json(body): Json<Value>) -> Response {
    let redirect_uris: Vec<String> = body["redirect_uris"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|u| u.as_str().map(str::to_string))
        .collect();
    if redirect_uris.is_empty() || body["token_endpoint_auth_method"] != "none" {
        return (
            StatusCode::BAD_REQUEST,
            "a public client with redirect_uris",
        )
            .into_response();
    }
    let mut inner = s.lock();
    inner.counter += 1;
    let client_id = format!("client-{}", inner.counter);
    inner
        .clients
        .insert(client_id.clone(), redirect_uris.clone());
    (
        StatusCode::CREATED,
        Json(json!({"client_id": client_id, "redirect_uris": redirect_uris})),
    )
        .into_response()
}

async fn authorize(
    State(s): State<Shared>,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    let field = |name: &str| query.get(name).cloned().unwrap_or_default();
    let (client_id, redirect_uri) = (field("client_id"), field("redirect_uri"));
    let mut inner = s.lock();
    let registered = inner
        .clients
        .get(&client_id)
        .is_some_and(|uris| uris.contains(&redirect_uri));
    if !registered
        || field("response_type") != "code"
        || field("code_challenge_method") != "S256"
        || field("code_challenge").is_empty()
    {
        return (StatusCode::BAD_REQUEST, "bad authorization request").into_response();
    }
    inner.counter += 1;
    let code = format!("code-{}", inner.counter);
    inner.codes.insert(
        code.clone(),
        (
            client_id,
            redirect_uri.clone(),
            field("code_challenge"),
            field("scope"),
        ),
    );
    let mut location = url::Url::parse(&redirect_uri).unwrap();
    location
        .query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &field("state"));
    (
        StatusCode::FOUND,
        [(header::LOCATION, location.to_string())],
    )
        .into_response()
}

fn token_error(error: &str) -> Response {
    (StatusCode::BAD_REQUEST, Json(json!({"error": error}))).into_response()
}

async fn token(State(s): State<Shared>, Form(form): Form<BTreeMap<String, String>>) -> Response {
    let field = |name: &str| form.get(name).cloned().unwrap_or_default();
    let mut inner = s.lock();
    inner.counter += 1;
    let n = inner.counter;
    let access = format!("access-{n}-{}", "x".repeat(16));
    match field("grant_type").as_str() {
        "authorization_code" => {
            let Some((client_id, redirect_uri, challenge, scope)) =
                inner.codes.remove(&field("code"))
            else {
                return token_error("invalid_grant");
            };
            let verifier_hash = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(Sha256::digest(field("code_verifier").as_bytes()));
            if verifier_hash != challenge
                || client_id != field("client_id")
                || redirect_uri != field("redirect_uri")
            {
                return token_error("invalid_grant");
            }
            let refresh = format!("refresh-{n}");
            inner.refresh_tokens.insert(refresh.clone(), client_id);
            inner.access_tokens.push(access.clone());
            inner.issued.push(access.clone());
            let expires_in = inner.login_expires_in;
            Json(json!({
                "access_token": access, "token_type": "Bearer", "expires_in": expires_in,
                "refresh_token": refresh, "scope": scope,
            }))
            .into_response()
        }
        "refresh_token" => {
            let known = inner
                .refresh_tokens
                .get(&field("refresh_token"))
                .is_some_and(|client| *client == field("client_id"));
            if !known {
                return token_error("invalid_grant");
            }
            inner.refreshes += 1;
            inner.access_tokens.push(access.clone());
            inner.issued.push(access.clone());
            // No new refresh token (RFC 6749 §6 allows it): the client keeps its own.
            Json(json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600}))
                .into_response()
        }
        _ => token_error("unsupported_grant_type"),
    }
}

/// The bearer token of a request, if the server honours it.
fn authorized(s: &Shared, headers: &HeaderMap) -> Option<String> {
    let token = headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")?
        .to_string();
    s.lock().access_tokens.contains(&token).then_some(token)
}

fn unauthorized(s: &Shared) -> Response {
    let challenge = format!(
        "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
        s.base_url
    );
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, challenge)],
        "unauthorized",
    )
        .into_response()
}

async fn mcp_get(State(s): State<Shared>, headers: HeaderMap) -> Response {
    match authorized(&s, &headers) {
        // No server-initiated stream.
        Some(_) => StatusCode::METHOD_NOT_ALLOWED.into_response(),
        None => unauthorized(&s),
    }
}

async fn mcp_delete(State(s): State<Shared>, headers: HeaderMap) -> Response {
    match authorized(&s, &headers) {
        Some(_) => StatusCode::OK.into_response(),
        None => unauthorized(&s),
    }
}

async fn mcp_post(
    State(s): State<Shared>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let Some(token) = authorized(&s, &headers) else {
        return unauthorized(&s);
    };
    s.lock().mcp_tokens.push(token);
    let Some(id) = body.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match body["method"].as_str().unwrap_or_default() {
        "initialize" => json!({
            "protocolVersion": body["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "oauth-mock", "version": "1.0.0"},
        }),
        "tools/list" => json!({"tools": [{
            "name": TOOL,
            "description": "Names the user the token was issued to.",
            "inputSchema": {"type": "object", "properties": {}},
        }]}),
        "tools/call" => json!({"content": [{
            "type": "text",
            "text": format!("{TOOL_ANSWER} the test user"),
        }]}),
        other => {
            let error = json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": format!("no method {other}")}});
            return Json(error).into_response();
        }
    };
    (
        [("mcp-session-id", "oauth-mock-session")],
        Json(json!({"jsonrpc": "2.0", "id": id, "result": result})),
    )
        .into_response()
}
