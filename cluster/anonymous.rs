//! Whether the pool's server lets anyone in. A server that asks no credentials accepts any
//! client (it ignores credentials it does not check), so what a client sent proves nothing:
//! only the server's own INFO tells. `auth_required` covers users, tokens, nkeys and
//! accounts; a server that authenticates by client certificate alone (`--tlsverify`)
//! says so in `tls_verify`, which async-nats does not expose, so that INFO is read once
//! more on a plain connection of its own (a NATS server sends it before any TLS).

use crate::connect::ClusterOptions;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// How long the second look at the server's INFO may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether the server `client` joined authenticates its clients.
pub async fn server_authenticates(client: &async_nats::Client, options: &ClusterOptions) -> bool {
    if client.server_info().auth_required {
        return true;
    }
    // Without a client certificate of ours, a server verifying certificates would have
    // refused us: it does not.
    if !options.tls.has_client_certificate() {
        return false;
    }
    let Some(address) = host_port(&options.url) else {
        return false;
    };
    tokio::time::timeout(PROBE_TIMEOUT, tls_verify(&address))
        .await
        .unwrap_or(false)
}

/// The `tls_verify` of the INFO the server at `address` sends first.
async fn tls_verify(address: &str) -> bool {
    let Ok(stream) = tokio::net::TcpStream::connect(address).await else {
        return false;
    };
    let mut line = String::new();
    let mut reader = tokio::io::BufReader::new(stream);
    if reader.read_line(&mut line).await.is_err() {
        return false;
    }
    info_requires_certificates(&line)
}

/// Whether an `INFO {json}` line has `"tls_verify": true`.
pub fn info_requires_certificates(line: &str) -> bool {
    let Some(json) = line.trim().strip_prefix("INFO") else {
        return false;
    };
    serde_json::from_str::<serde_json::Value>(json.trim())
        .ok()
        .and_then(|info| info.get("tls_verify").and_then(serde_json::Value::as_bool))
        .unwrap_or(false)
}

/// `host:port` of the first server of `url` (`nats://user:pw@host:port,…`), port 4222 by
/// default.
pub fn host_port(url: &str) -> Option<String> {
    let first = url.split(',').next()?.trim();
    let rest = first.split_once("://").map_or(first, |(_, rest)| rest);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    let rest = rest.split('/').next()?;
    if rest.is_empty() {
        return None;
    }
    let has_port = match rest.rfind(']') {
        Some(bracket) => rest[bracket..].contains(':'),
        None => rest.contains(':'),
    };
    Some(if has_port {
        rest.to_string()
    } else {
        format!("{rest}:4222")
    })
}

#[cfg(test)]
#[path = "anonymous_tests.rs"]
mod tests;
