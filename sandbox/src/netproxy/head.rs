//! The proxy's request head, parsed (pure): `CONNECT host:port` for https, an absolute
//! `http://host[:port]/path` URI for plain http. Anything else is refused with a status.

/// Largest request head read (request line and headers).
pub const MAX_HEAD: usize = 16 * 1024;

/// What a client asked the proxy for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyRequest {
    /// Lower-case host name or IP literal (no brackets).
    pub host: String,
    pub port: u16,
    /// `CONNECT`: a tunnel; otherwise a plain-http request to forward.
    pub tunnel: bool,
    /// For plain http: the head to send upstream (origin-form target, proxy headers
    /// dropped, `Connection: close`).
    pub upstream_head: Vec<u8>,
}

/// Why a head was refused, with the HTTP status the client gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub reason: String,
}

fn refuse(status: u16, reason: impl Into<String>) -> Refusal {
    Refusal {
        status,
        reason: reason.into(),
    }
}

/// The end of the head in `buf` (index just past `\r\n\r\n`), if complete.
pub fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// Parses a complete head (`head` ends with `\r\n\r\n`).
pub fn parse(head: &[u8]) -> Result<ProxyRequest, Refusal> {
    let text =
        std::str::from_utf8(head).map_err(|_| refuse(400, "the request head is not UTF-8"))?;
    let mut lines = text.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(refuse(400, "malformed request line"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(refuse(505, "only HTTP/1.x is proxied"));
    }
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = host_port(target, None)?;
        return Ok(ProxyRequest {
            host,
            port,
            tunnel: true,
            upstream_head: Vec::new(),
        });
    }
    let Some(rest) = strip_prefix_ci(target, "http://") else {
        return Err(refuse(
            400,
            "the proxy takes CONNECT host:port (https) or an absolute http:// URI",
        ));
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
        Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
        None => (rest, "/".to_string()),
    };
    if authority.contains('@') {
        return Err(refuse(400, "credentials in the URI are not proxied"));
    }
    let (host, port) = host_port(authority, Some(80))?;
    let mut upstream = format!("{method} {path} {version}\r\n");
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line.split(':').next().unwrap_or_default().trim();
        let hop = [
            "proxy-connection",
            "proxy-authorization",
            "connection",
            "keep-alive",
        ];
        if hop.iter().any(|h| name.eq_ignore_ascii_case(h)) {
            continue;
        }
        upstream.push_str(line);
        upstream.push_str("\r\n");
    }
    // One request per upstream connection: a kept-alive connection cannot carry a second
    // request to another host past the check.
    upstream.push_str("Connection: close\r\n\r\n");
    Ok(ProxyRequest {
        host,
        port,
        tunnel: false,
        upstream_head: upstream.into_bytes(),
    })
}

fn strip_prefix_ci<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// `host:port` (or `[v6]:port`); `default_port` when the port may be omitted.
fn host_port(authority: &str, default_port: Option<u16>) -> Result<(String, u16), Refusal> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or_else(|| refuse(400, "unclosed [ in the host"))?;
        (host, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port = match (port, default_port) {
        (Some(p), _) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| refuse(400, format!("bad port `{p}`")))?,
        (None, Some(p)) => p,
        (None, None) => return Err(refuse(400, "CONNECT needs host:port")),
    };
    let host = host.to_ascii_lowercase();
    let valid = !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b':');
    if !valid {
        return Err(refuse(400, format!("bad host `{host}`")));
    }
    Ok((host, port))
}

/// The response a refused or denied client gets.
pub fn response(status: u16, reason: &str) -> Vec<u8> {
    let text = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        502 => "Bad Gateway",
        505 => "HTTP Version Not Supported",
        _ => "Error",
    };
    let body = format!("{reason}\n");
    format!(
        "HTTP/1.1 {status} {text}\r\nContent-Type: text/plain\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
#[path = "head_tests.rs"]
mod tests;
