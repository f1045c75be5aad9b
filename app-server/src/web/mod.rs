//! The supervisor web page (`--web`): a static page embedded in the binary, served by plain
//! HTTP on the WebSocket's own port. The listener reads each connection's request head; an
//! upgrade goes on to the WebSocket handshake (with the bytes already read put back in front),
//! anything else is answered here and the connection closed.
//!
//! The page holds no secret: the capability token reaches the browser only in the URL
//! fragment (browsers never send fragments), and the page presents it on its WebSocket as a
//! subprotocol (`transport::WsAuth`).

mod prefixed;

pub use prefixed::Prefixed;

use std::net::SocketAddr;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The longest request head read before refusing.
const MAX_HEAD_BYTES: usize = 16 * 1024;
/// A client that sends no complete head in this long is dropped.
const HEAD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// One embedded file.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

/// Every file of the page. Plain ES modules and CSS: no build step, `cargo build` embeds them.
const ASSETS: &[Asset] = &[
    Asset {
        path: "/",
        content_type: "text/html; charset=utf-8",
        body: include_bytes!("assets/index.html"),
    },
    Asset {
        path: "/style.css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("assets/style.css"),
    },
    Asset {
        path: "/app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("assets/app.js"),
    },
    Asset {
        path: "/rpc.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("assets/rpc.js"),
    },
    Asset {
        path: "/state.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("assets/state.js"),
    },
    Asset {
        path: "/render.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("assets/render.js"),
    },
    Asset {
        path: "/markdown.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("assets/markdown.js"),
    },
    Asset {
        path: "/views.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("assets/views.js"),
    },
    Asset {
        path: "/labels.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("assets/labels.js"),
    },
    Asset {
        path: "/favicon.svg",
        content_type: "image/svg+xml",
        body: include_bytes!("assets/favicon.svg"),
    },
];

/// Where the page is served, which decides its allowed hosts, origins and CSP.
#[derive(Debug, Clone)]
pub struct WebPage {
    /// `Host` header values accepted (DNS-rebinding defence); empty accepts any (a server
    /// bound to an unspecified address cannot know the names it is reached by).
    pub hosts: Vec<String>,
    pub content_security_policy: String,
}

impl WebPage {
    /// The page for a server bound at `bound`.
    pub fn new(bound: SocketAddr) -> Self {
        let port = bound.port();
        let mut hosts = Vec::new();
        if !bound.ip().is_unspecified() {
            hosts.push(bound.to_string());
            if bound.ip().is_loopback() {
                hosts.push(format!("localhost:{port}"));
            }
        }
        let sockets: Vec<String> = hosts.iter().map(|h| format!("ws://{h}")).collect();
        let content_security_policy = format!(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
             connect-src 'self'{}{}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; \
             require-trusted-types-for 'script'; trusted-types 'none'",
            if sockets.is_empty() { "" } else { " " },
            sockets.join(" ")
        );
        WebPage {
            hosts,
            content_security_policy,
        }
    }

    /// Origins the page's WebSocket comes from, allowed by default beside `--ws-allowed-origin`.
    pub fn own_origins(&self) -> Vec<String> {
        self.hosts.iter().map(|h| format!("http://{h}")).collect()
    }

    /// The full HTTP response to a request head that is not a WebSocket upgrade.
    pub fn respond(&self, head: &RequestHead) -> Vec<u8> {
        if let Some(host) = head.header("host") {
            if !self.hosts.is_empty() && !self.hosts.iter().any(|h| h == host) {
                return plain(421, "Misdirected Request", "unknown host\n");
            }
        }
        let path = head.target.split(['?', '#']).next().unwrap_or_default();
        let Some(asset) = ASSETS.iter().find(|a| a.path == path) else {
            return plain(404, "Not Found", "not found\n");
        };
        let body: &[u8] = match head.method.as_str() {
            "GET" => asset.body,
            "HEAD" => &[],
            _ => return plain(405, "Method Not Allowed", "only GET and HEAD\n"),
        };
        let mut response = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}\r\n",
            asset.content_type,
            asset.body.len(),
            self.security_headers()
        )
        .into_bytes();
        response.extend_from_slice(body);
        response
    }

    fn security_headers(&self) -> String {
        format!(
            "Content-Security-Policy: {}\r\nX-Content-Type-Options: nosniff\r\n\
             X-Frame-Options: DENY\r\nReferrer-Policy: no-referrer\r\n\
             Cross-Origin-Opener-Policy: same-origin\r\nCross-Origin-Resource-Policy: same-origin\r\n\
             Cache-Control: no-store\r\nConnection: close\r\n",
            self.content_security_policy
        )
    }
}

fn plain(status: u16, reason: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The page's address with the token in the fragment (percent-encoded), which browsers never
/// send to a server nor put in a `Referer`.
pub fn page_url(bound: SocketAddr, token: &str) -> String {
    let mut encoded = String::with_capacity(token.len());
    for byte in token.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    format!("http://{bound}/#token={encoded}")
}

/// A parsed HTTP request line and headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHead {
    pub method: String,
    pub target: String,
    /// Lower-cased names, values trimmed, in order.
    pub headers: Vec<(String, String)>,
}

impl RequestHead {
    /// Parses the bytes before the blank line; `None` for anything that is not HTTP/1.x.
    pub fn parse(head: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(head).ok()?;
        let mut lines = text.split("\r\n");
        let mut request_line = lines.next()?.split(' ');
        let method = request_line.next()?.to_string();
        let target = request_line.next()?.to_string();
        if !request_line.next()?.starts_with("HTTP/1.") || method.is_empty() {
            return None;
        }
        let mut headers = Vec::new();
        for line in lines.filter(|l| !l.is_empty()) {
            let (name, value) = line.split_once(':')?;
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
        Some(RequestHead {
            method,
            target,
            headers,
        })
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// A WebSocket upgrade (`Upgrade: websocket`), left to the WebSocket handshake.
    pub fn is_websocket_upgrade(&self) -> bool {
        self.header("upgrade")
            .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
    }
}

/// What became of a connection.
pub enum Routed<S> {
    /// A WebSocket upgrade: the stream with its head put back, for the handshake.
    Upgrade(Prefixed<S>),
    /// Answered (a page file or a refusal) and closed.
    Served,
}

/// Reads a connection's request head and either answers it or hands it on as an upgrade.
pub async fn route<S>(mut stream: S, page: &WebPage) -> std::io::Result<Routed<S>>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut buffer = Vec::with_capacity(1024);
    let head_end = tokio::time::timeout(HEAD_TIMEOUT, async {
        let mut chunk = [0u8; 2048];
        loop {
            if let Some(at) = find_blank_line(&buffer) {
                return Ok::<_, std::io::Error>(Some(at));
            }
            if buffer.len() > MAX_HEAD_BYTES {
                return Ok(None);
            }
            let read = stream.read(&mut chunk).await?;
            if read == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            buffer.extend_from_slice(&chunk[..read]);
        }
    })
    .await
    .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))??;
    let head = head_end.and_then(|at| RequestHead::parse(&buffer[..at]));
    let response = match head {
        Some(head) if head.is_websocket_upgrade() => {
            return Ok(Routed::Upgrade(Prefixed::new(buffer, stream)));
        }
        Some(head) => page.respond(&head),
        None => plain(400, "Bad Request", "bad request\n"),
    };
    stream.write_all(&response).await?;
    stream.shutdown().await?;
    Ok(Routed::Served)
}

/// Where the head ends (the index of the blank line's `\r\n\r\n`).
fn find_blank_line(buffer: &[u8]) -> Option<usize> {
    buffer.windows(4).position(|w| w == b"\r\n\r\n")
}

#[cfg(test)]
#[path = "web_tests.rs"]
mod tests;
