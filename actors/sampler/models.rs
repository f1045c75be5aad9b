//! `GET {base_url}/models`: which models a provider serves (`troupe models`), and whether a
//! local server answers at all (`--oss`).

use super::auth::{api_key, redact};
use super::wire::wire_for;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;
use thiserror::Error;
use troupe_messages::settings::ProviderSettings;

#[derive(Debug, Error)]
pub enum ModelsError {
    #[error(transparent)]
    Auth(#[from] super::auth::AuthError),
    #[error("no answer from {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("{url} answered HTTP {status}: {body}")]
    Status {
        url: String,
        status: u16,
        body: String,
    },
    #[error("{url} did not answer a model list: {reason}")]
    BadList { url: String, reason: String },
}

/// The ids of the models `provider` lists, in its order.
pub async fn list_models(
    http: &reqwest::Client,
    provider: &ProviderSettings,
    auth_file: &Path,
    timeout: Duration,
) -> Result<Vec<String>, ModelsError> {
    let key = api_key(provider, auth_file)?;
    let wire = wire_for(provider.wire_api);
    let url = format!("{}/models", provider.base_url);
    let mut builder = wire.headers(http.get(&url));
    if let Some(key) = &key {
        builder = wire.authorize(builder, key);
    }
    for (name, value) in &provider.http_headers {
        builder = builder.header(name, value);
    }
    let scrub = |text: String| redact(&text, key.as_deref());
    let unreachable = |reason: String| ModelsError::Unreachable {
        url: url.clone(),
        reason: scrub(reason),
    };
    let response = match tokio::time::timeout(timeout, builder.send()).await {
        Err(_) => return Err(unreachable(format!("nothing within {timeout:?}"))),
        Ok(Err(err)) => return Err(unreachable(error_chain(&err))),
        Ok(Ok(response)) => response,
    };
    let status = response.status().as_u16();
    let body = match tokio::time::timeout(timeout, response.text()).await {
        Ok(Ok(body)) => body,
        Ok(Err(err)) => return Err(unreachable(error_chain(&err))),
        Err(_) => return Err(unreachable(format!("the body took over {timeout:?}"))),
    };
    if !(200..300).contains(&status) {
        return Err(ModelsError::Status {
            url: url.clone(),
            status,
            body: scrub(body.chars().take(300).collect()),
        });
    }
    parse_model_list(&body).map_err(|reason| ModelsError::BadList { url, reason })
}

/// The ids of `{"data": [{"id": …}, …]}` (OpenAI, Anthropic, every local server's OpenAI
/// endpoint) or of Ollama's native `{"models": [{"name": …}]}`.
pub fn parse_model_list(body: &str) -> Result<Vec<String>, String> {
    let value: Value = serde_json::from_str(body).map_err(|err| format!("not JSON: {err}"))?;
    let (list, field) = match (value.get("data"), value.get("models")) {
        (Some(Value::Array(list)), _) => (list, "id"),
        (_, Some(Value::Array(list))) => (list, "name"),
        _ => return Err("no `data` array".into()),
    };
    Ok(list
        .iter()
        .filter_map(|model| model.get(field).and_then(Value::as_str))
        .map(str::to_string)
        .collect())
}

fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(inner) = source {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    text
}
