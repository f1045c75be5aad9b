//! The network proxy of sandboxed commands whose network is off (`[network_proxy]`): an HTTP
//! proxy on a Unix socket, the one way out of the sandbox's empty network namespace (the
//! sandbox helper forwards `127.0.0.1:PORT` inside the namespace to this socket, see
//! `helper::bridge`). Each new host is put to a [`Gate`] (the runtime asks the user or a
//! PermissionRequest hook: `network-access <host>`); a host the gate refuses gets `403`.
//!
//! `CONNECT host:port` opens a tunnel (https: the proxy never sees the traffic), an absolute
//! `http://` URI is forwarded as one request (`Connection: close`). Host names may be mapped
//! to fixed addresses (`network_proxy.hosts`), otherwise they are resolved by the host.

pub mod head;

use head::{head_end, parse, response, ProxyRequest, MAX_HEAD};
use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};

/// Decides whether a command may reach a host (asked once per host and connection; the
/// gate keeps its own memory of earlier answers).
pub trait Gate: Send + Sync + 'static {
    fn allow(&self, host: String) -> Pin<Box<dyn Future<Output = bool> + Send>>;
}

/// How long a client has to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting upstream may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// A running proxy; dropping it stops accepting and removes its socket.
pub struct NetworkProxy {
    socket: PathBuf,
    task: tokio::task::JoinHandle<()>,
}

impl NetworkProxy {
    /// Listens on `socket` (created 0600 inside a private directory by the caller).
    pub fn start(
        socket: &Path,
        hosts: BTreeMap<String, String>,
        gate: Arc<dyn Gate>,
    ) -> io::Result<Self> {
        let _ = std::fs::remove_file(socket);
        let listener = UnixListener::bind(socket)?;
        let hosts = Arc::new(hosts);
        let task = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    // Out of descriptors or similar: wait rather than spin.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                let (hosts, gate) = (hosts.clone(), gate.clone());
                tokio::spawn(async move {
                    if let Err(err) = serve(client, &hosts, gate.as_ref()).await {
                        tracing::debug!("network proxy connection: {err}");
                    }
                });
            }
        });
        Ok(Self {
            socket: socket.to_path_buf(),
            task,
        })
    }

    /// Where it listens.
    pub fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for NetworkProxy {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.socket);
    }
}

async fn serve(
    mut client: UnixStream,
    hosts: &BTreeMap<String, String>,
    gate: &dyn Gate,
) -> io::Result<()> {
    let mut buf = Vec::with_capacity(1024);
    let end = tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client, &mut buf))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "no request head"))??;
    let Some(end) = end else {
        return client
            .write_all(&response(400, "request head too large or cut"))
            .await;
    };
    let request = match parse(&buf[..end]) {
        Ok(request) => request,
        Err(refusal) => {
            return client
                .write_all(&response(refusal.status, &refusal.reason))
                .await
        }
    };
    if !gate.allow(request.host.clone()).await {
        let reason = format!("network-access {} denied", request.host);
        return client.write_all(&response(403, &reason)).await;
    }
    let mut upstream = match connect(&request, hosts).await {
        Ok(stream) => stream,
        Err(err) => {
            let reason = format!("cannot reach {}:{}: {err}", request.host, request.port);
            return client.write_all(&response(502, &reason)).await;
        }
    };
    if request.tunnel {
        client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await?;
    } else {
        upstream.write_all(&request.upstream_head).await?;
    }
    upstream.write_all(&buf[end..]).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

/// Reads until the end of the head; `None` when the client stopped or the head is too big.
async fn read_head(client: &mut UnixStream, buf: &mut Vec<u8>) -> io::Result<Option<usize>> {
    let mut chunk = [0u8; 2048];
    loop {
        if let Some(end) = head_end(buf) {
            return Ok(Some(end));
        }
        if buf.len() > MAX_HEAD {
            return Ok(None);
        }
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

async fn connect(
    request: &ProxyRequest,
    hosts: &BTreeMap<String, String>,
) -> io::Result<TcpStream> {
    let host = hosts
        .get(&request.host)
        .cloned()
        .unwrap_or_else(|| request.host.clone());
    tokio::time::timeout(
        CONNECT_TIMEOUT,
        TcpStream::connect((host.as_str(), request.port)),
    )
    .await
    .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "connect timed out"))?
}
