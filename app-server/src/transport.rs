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

/// Writes queued lines, each followed by a newline, and lag notices when they are due.
pub async fn write_lines<W: AsyncWrite + Unpin>(writer: W, mut out: Outbound) {
    let mut writer = BufWriter::new(writer);
    loop {
        let line = tokio::select! {
            biased;
            line = out.lines.recv() => match line {
                Some(line) => Some(line),
                None => break,
            },
            () = out.lag.wake.notified() => None,
        };
        let mut lines: Vec<crate::wire::Line> = line.into_iter().collect();
        lines.extend(out.lag.take_notices());
        for line in lines {
            if writer.write_all(line.as_bytes()).await.is_err()
                || writer.write_all(b"\n").await.is_err()
            {
                return;
            }
        }
        if out.lines.is_empty() && writer.flush().await.is_err() {
            return;
        }
    }
    let _ = writer.flush().await;
}

/// Serves one client on stdin/stdout until stdin closes.
pub async fn serve_stdio(hub: Arc<Hub>) {
    let (sink, outbound) = connection::open();
    let (frames_tx, frames) = mpsc::channel(INBOUND_CAPACITY);
    tokio::spawn(read_lines(tokio::io::stdin(), frames_tx));
    let writer = tokio::spawn(write_lines(tokio::io::stdout(), outbound));
    connection::run(hub, sink, frames).await;
    // Let queued answers out before the process ends.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), writer).await;
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
    /// The capability token (`Authorization: Bearer <token>`); `None` only on loopback.
    pub token: Option<String>,
    /// Browser origins allowed; a request with another `Origin` header is refused.
    pub allowed_origins: Vec<String>,
}

impl WsAuth {
    /// Checks an upgrade request; the error is the HTTP refusal.
    pub fn check(&self, request: &Request) -> Result<(), (StatusCode, &'static str)> {
        if let Some(origin) = request.headers().get("origin") {
            let origin = origin.to_str().unwrap_or_default();
            if !self.allowed_origins.iter().any(|o| o == origin) {
                return Err((StatusCode::FORBIDDEN, "origin not allowed"));
            }
        }
        if let Some(token) = &self.token {
            let presented = request
                .headers()
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .unwrap_or_default();
            let equal: bool = presented.as_bytes().ct_eq(token.as_bytes()).into();
            if !equal {
                return Err((
                    StatusCode::UNAUTHORIZED,
                    "missing or wrong capability token",
                ));
            }
        }
        Ok(())
    }
}

/// Serves clients over WebSocket until the process ends.
pub async fn serve_ws(hub: Arc<Hub>, listener: tokio::net::TcpListener, auth: WsAuth) {
    let auth = Arc::new(auth);
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            continue;
        };
        let hub = hub.clone();
        let auth = auth.clone();
        tokio::spawn(async move {
            if let Err(err) = serve_ws_client(hub, stream, peer, &auth).await {
                tracing::info!(%peer, %err, "websocket client refused or failed");
            }
        });
    }
}

// The handshake callback's error type is tungstenite's HTTP response: it cannot be boxed.
#[allow(clippy::result_large_err)]
async fn serve_ws_client(
    hub: Arc<Hub>,
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    auth: &WsAuth,
) -> Result<(), tokio_tungstenite::tungstenite::Error> {
    let callback = |request: &Request, response: Response| match auth.check(request) {
        Ok(()) => Ok(response),
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
            let mut lines: Vec<crate::wire::Line> = line.into_iter().collect();
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
