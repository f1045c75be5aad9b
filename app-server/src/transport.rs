//! The three listeners: stdio (one client), a unix socket (mode 0600), and WebSocket with a
//! capability token and an Origin allow-list. Each turns bytes into frames for `connection`.

use crate::connection::{self, InFrame, Outbound, MAX_FRAME_BYTES};
use crate::hub::Hub;
use futures::{SinkExt, StreamExt};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use subtle::ConstantTimeEq;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

/// Frames read ahead of the connection.
const INBOUND_CAPACITY: usize = 64;

/// Reads newline-separated frames; a frame over the limit is skipped and reported, never held.
pub async fn read_lines<R: AsyncRead + Unpin>(reader: R, frames: mpsc::Sender<InFrame>) {
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut line = Vec::new();
    let mut too_long = false;
    while let Ok(buf) = reader.fill_buf().await {
        if buf.is_empty() {
            if !line.is_empty() && !too_long {
                let _ = frames.send(InFrame::Line(line)).await;
            }
            break;
        }
        let (chunk, end) = match buf.iter().position(|b| *b == b'\n') {
            Some(at) => (&buf[..at], Some(at + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > MAX_FRAME_BYTES {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let consumed = end.unwrap_or(chunk.len());
        reader.consume(consumed);
        if end.is_some() {
            let frame = if too_long {
                InFrame::TooLong
            } else {
                InFrame::Line(std::mem::take(&mut line))
            };
            too_long = false;
            if frames.send(frame).await.is_err() {
                break;
            }
        }
    }
}

/// Most lines one batch takes from the queue (a batch is written and flushed as a whole).
const MAX_BATCH: usize = 256;

/// The next lines to write: every line queued now (at least one, up to [`MAX_BATCH`]) and
/// the lag notices that are due; `None` once the queue is closed.
async fn next_batch(out: &mut Outbound) -> Option<Vec<troupe_app_server_protocol::jsonrpc::Line>> {
    let line = tokio::select! {
        biased;
        line = out.lines.recv() => Some(line?),
        () = out.lag.wake.notified() => None,
    };
    let mut lines: Vec<troupe_app_server_protocol::jsonrpc::Line> = line.into_iter().collect();
    while lines.len() < MAX_BATCH {
        match out.lines.try_recv() {
            Ok(line) => lines.push(line),
            Err(_) => break,
        }
    }
    lines.extend(out.lag.take_notices());
    Some(lines)
}

/// Writes queued lines, each followed by a newline, and lag notices when they are due;
/// flushes after each batch. (Flushing only once the queue was empty let a line wait in the
/// buffer for as long as other threads kept the queue from emptying: milliseconds under load.)
pub async fn write_lines<W: AsyncWrite + Unpin>(writer: W, mut out: Outbound) {
    let mut writer = BufWriter::new(writer);
    while let Some(lines) = next_batch(&mut out).await {
        for line in lines {
            if writer.write_all(line.as_bytes()).await.is_err()
                || writer.write_all(b"\n").await.is_err()
            {
                return;
            }
        }
        if writer.flush().await.is_err() {
            return;
        }
    }
    let _ = writer.flush().await;
}

/// [`write_lines`] for a blocking writer (stdout), run on a thread of its own: woken directly
/// by the queue, it writes with plain system calls. On the runtime, each write to tokio's
/// stdout is a blocking-pool job whose completion wakes the writer through the runtime's
/// shared queue, and under load (hundreds of busy tasks) every such hop waited its turn:
/// notifications sat tens of milliseconds between the pump and the pipe.
fn write_lines_blocking<W: std::io::Write>(
    runtime: &tokio::runtime::Handle,
    writer: W,
    mut out: Outbound,
) {
    use std::io::Write;
    let mut writer = std::io::BufWriter::with_capacity(64 * 1024, writer);
    while let Some(lines) = runtime.block_on(next_batch(&mut out)) {
        for line in lines {
            if writer.write_all(line.as_bytes()).is_err() || writer.write_all(b"\n").is_err() {
                return;
            }
        }
        if writer.flush().is_err() {
            return;
        }
    }
    let _ = writer.flush();
}

/// Serves one client on stdin/stdout until stdin closes.
pub async fn serve_stdio(hub: Arc<Hub>) {
    let (sink, outbound) = connection::open();
    let (frames_tx, frames) = mpsc::channel(INBOUND_CAPACITY);
    tokio::spawn(read_lines(tokio::io::stdin(), frames_tx));
    let (written_tx, written) = tokio::sync::oneshot::channel::<()>();
    let runtime = tokio::runtime::Handle::current();
    let writer = std::thread::Builder::new()
        .name("app-server-stdout".into())
        .spawn(move || {
            if !crate::slice::request_short_slice() {
                tracing::debug!("app-server: the kernel took no short slice for the stdout writer");
            }
            write_lines_blocking(&runtime, std::io::stdout(), outbound);
            let _ = written_tx.send(());
        });
    if let Err(err) = writer {
        tracing::error!("app-server: no stdout writer thread: {err}");
        return;
    }
    connection::run(hub, sink, frames).await;
    // Let queued answers out before the process ends.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), written).await;
}

/// Binds a unix socket only the owner can use, replacing a stale socket file.
pub fn bind_unix(path: &Path) -> std::io::Result<tokio::net::UnixListener> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!("{} exists and is not a socket", path.display()),
            ));
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AddrInUse,
                format!("another server listens on {}", path.display()),
            ));
        }
        std::fs::remove_file(path)?;
    }
    // Created with no access for others from the start, then exactly 0600.
    let old = unsafe { libc_umask(0o177) };
    let listener = tokio::net::UnixListener::bind(path);
    unsafe { libc_umask(old) };
    let listener = listener?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

extern "C" {
    #[link_name = "umask"]
    fn libc_umask(mask: u32) -> u32;
}

/// Serves clients on a unix socket until the process ends.
pub async fn serve_unix(hub: Arc<Hub>, listener: tokio::net::UnixListener, path: PathBuf) {
    tracing::info!(path = %path.display(), "listening");
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let hub = hub.clone();
        tokio::spawn(async move {
            let (read, write) = stream.into_split();
            let (sink, outbound) = connection::open();
            let (frames_tx, frames) = mpsc::channel(INBOUND_CAPACITY);
            tokio::spawn(read_lines(read, frames_tx));
            tokio::spawn(write_lines(write, outbound));
            connection::run(hub, sink, frames).await;
        });
    }
}

/// Who may open a WebSocket.
#[derive(Debug, Clone, Default)]
pub struct WsAuth {
    /// The capability token; `None` only on loopback. Presented as `Authorization: Bearer
    /// <token>`, or (browsers cannot set headers on a WebSocket) as the subprotocol
    /// `troupe.token.<hex of the token's bytes>` offered beside `troupe.app-server`.
    pub token: Option<String>,
    /// Browser origins allowed; a request with another `Origin` header is refused.
    pub allowed_origins: Vec<String>,
}

/// The subprotocol a browser offers with its token one; the server selects it.
pub const APP_SERVER_SUBPROTOCOL: &str = "troupe.app-server";
/// Prefix of the subprotocol that carries the token, hex-encoded (any token fits a header).
pub const TOKEN_SUBPROTOCOL_PREFIX: &str = "troupe.token.";

impl WsAuth {
    /// Checks an upgrade request; `Ok(Some(protocol))` names the subprotocol the response
    /// must select. The error is the HTTP refusal.
    pub fn check(
        &self,
        request: &Request,
    ) -> Result<Option<&'static str>, (StatusCode, &'static str)> {
        if let Some(origin) = request.headers().get("origin") {
            let origin = origin.to_str().unwrap_or_default();
            if !self.allowed_origins.iter().any(|o| o == origin) {
                return Err((StatusCode::FORBIDDEN, "origin not allowed"));
            }
        }
        let offered: Vec<&str> = request
            .headers()
            .get_all("sec-websocket-protocol")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect();
        let protocol_token = offered
            .iter()
            .find_map(|p| p.strip_prefix(TOKEN_SUBPROTOCOL_PREFIX))
            .map(decode_hex);
        let selected = match protocol_token {
            Some(_) if !offered.contains(&APP_SERVER_SUBPROTOCOL) => {
                return Err((
                    StatusCode::BAD_REQUEST,
                    "a token subprotocol needs `troupe.app-server` offered beside it",
                ));
            }
            Some(_) => Some(APP_SERVER_SUBPROTOCOL),
            None => None,
        };
        if let Some(token) = &self.token {
            let presented = match protocol_token {
                Some(decoded) => decoded.unwrap_or_default(),
                None => request
                    .headers()
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer "))
                    .unwrap_or_default()
                    .as_bytes()
                    .to_vec(),
            };
            let equal: bool = presented.as_slice().ct_eq(token.as_bytes()).into();
            if !equal {
                return Err((
                    StatusCode::UNAUTHORIZED,
                    "missing or wrong capability token",
                ));
            }
        }
        Ok(selected)
    }
}

/// Lower- or upper-case hex to bytes; `None` for anything else.
fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Serves clients over WebSocket until the process ends; with `page`, plain HTTP requests
/// on the same port get the supervisor web page.
pub async fn serve_ws(
    hub: Arc<Hub>,
    listener: tokio::net::TcpListener,
    auth: WsAuth,
    page: Option<crate::web::WebPage>,
) {
    let auth = Arc::new(auth);
    let page = page.map(Arc::new);
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            continue;
        };
        let hub = hub.clone();
        let auth = auth.clone();
        let page = page.clone();
        tokio::spawn(async move {
            let served = match page {
                None => serve_ws_client(hub, stream, peer, &auth).await,
                Some(page) => match crate::web::route(stream, &page).await {
                    Ok(crate::web::Routed::Upgrade(stream)) => {
                        serve_ws_client(hub, stream, peer, &auth).await
                    }
                    Ok(crate::web::Routed::Served) => Ok(()),
                    Err(err) => Err(err.into()),
                },
            };
            if let Err(err) = served {
                tracing::info!(%peer, %err, "websocket client refused or failed");
            }
        });
    }
}

// The handshake callback's error type is tungstenite's HTTP response: it cannot be boxed.
#[allow(clippy::result_large_err)]
async fn serve_ws_client<S>(
    hub: Arc<Hub>,
    stream: S,
    peer: SocketAddr,
    auth: &WsAuth,
) -> Result<(), tokio_tungstenite::tungstenite::Error>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let callback = |request: &Request, mut response: Response| match auth.check(request) {
        Ok(selected) => {
            if let Some(protocol) = selected {
                response.headers_mut().insert(
                    "sec-websocket-protocol",
                    tokio_tungstenite::tungstenite::http::HeaderValue::from_static(protocol),
                );
            }
            Ok(response)
        }
        Err((status, why)) => {
            let mut refusal = ErrorResponse::new(Some(why.to_string()));
            *refusal.status_mut() = status;
            Err(refusal)
        }
    };
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_FRAME_BYTES))
        .max_frame_size(Some(MAX_FRAME_BYTES));
    let socket =
        tokio_tungstenite::accept_hdr_async_with_config(stream, callback, Some(config)).await?;
    tracing::info!(%peer, "websocket client connected");
    let (mut write, mut read) = socket.split();
    let (sink, mut outbound) = connection::open();
    let (frames_tx, frames) = mpsc::channel(INBOUND_CAPACITY);
    tokio::spawn(async move {
        while let Some(message) = read.next().await {
            let frame = match message {
                Ok(Message::Text(text)) => InFrame::Line(text.as_bytes().to_vec()),
                Ok(Message::Binary(bytes)) => InFrame::Line(bytes.to_vec()),
                Ok(Message::Close(_)) => break,
                Ok(_) => continue,
                Err(tokio_tungstenite::tungstenite::Error::Capacity(_)) => {
                    let _ = frames_tx.send(InFrame::TooLong).await;
                    break;
                }
                Err(_) => break,
            };
            if frames_tx.send(frame).await.is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        loop {
            let line = tokio::select! {
                biased;
                line = outbound.lines.recv() => match line {
                    Some(line) => Some(line),
                    None => break,
                },
                () = outbound.lag.wake.notified() => None,
            };
            let mut lines: Vec<troupe_app_server_protocol::jsonrpc::Line> =
                line.into_iter().collect();
            lines.extend(outbound.lag.take_notices());
            for line in lines {
                if write.send(Message::text(line.to_string())).await.is_err() {
                    return;
                }
            }
        }
        let _ = write.close().await;
    });
    connection::run(hub, sink, frames).await;
    Ok(())
}
