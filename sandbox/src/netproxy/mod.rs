//! The network proxy of sandboxed commands whose network is off (`[network_proxy]`): an HTTP
//! proxy on a Unix socket, the one way out of the sandbox's empty network namespace (the
//! sandbox helper forwards `127.0.0.1:PORT` inside the namespace to this socket, see
//! `helper::bridge`). Each new host is put to a [`Gate`] (the runtime asks the user or a
//! PermissionRequest hook: `network-access <host>`); a host the gate refuses gets `403`.
//!
//! `CONNECT host:port` opens a tunnel (https: the proxy never sees the traffic), an absolute
//! `http://` URI is forwarded as one request (`Connection: close`). Host names may be mapped
//! to fixed addresses (`network_proxy.hosts`), otherwise they are resolved by the host, once:
//! the resolved addresses are filtered ([`destination`]: public ones only, unless the user
//! allowed the name) and the proxy connects to one of those very addresses.

pub mod destination;
pub mod head;

use destination::Destinations;
use head::{head_end, parse, response, ProxyRequest, MAX_HEAD};
use std::future::Future;
use std::io;
use std::net::SocketAddr;
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
        destinations: Destinations,
        gate: Arc<dyn Gate>,
    ) -> io::Result<Self> {
        let _ = std::fs::remove_file(socket);
        let listener = UnixListener::bind(socket)?;
        let destinations = Arc::new(destinations);
        let task = tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    // Out of descriptors or similar: wait rather than spin.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                let (destinations, gate) = (destinations.clone(), gate.clone());
                tokio::spawn(async move {
                    if let Err(err) = serve(client, &destinations, gate.as_ref()).await {
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
    destinations: &Destinations,
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
    let addresses = match resolve(&request, destinations).await {
        Ok(addresses) => addresses,
        Err(Unreachable::Local(refusal)) => {
            return client.write_all(&response(403, &refusal.to_string())).await;
        }
        Err(Unreachable::Lookup(err)) => {
            let reason = format!("cannot resolve {}: {err}", request.host);
            return client.write_all(&response(502, &reason)).await;
        }
    };
    let mut upstream = match connect(&addresses).await {
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

enum Unreachable {
    Local(destination::LocalRefusal),
    Lookup(io::Error),
}

/// The addresses to try for `request`: its pinned address or the host's DNS answer (the one
/// resolution made), filtered by `destinations`.
async fn resolve(
    request: &ProxyRequest,
    destinations: &Destinations,
) -> Result<Vec<SocketAddr>, Unreachable> {
    let resolved: Vec<SocketAddr> = match destinations.pinned(&request.host) {
        Some(ip) => vec![SocketAddr::new(ip, request.port)],
        None => tokio::time::timeout(
            CONNECT_TIMEOUT,
            tokio::net::lookup_host((request.host.as_str(), request.port)),
        )
        .await
        .map_err(|_| Unreachable::Lookup(timed_out("the lookup timed out")))?
        .map_err(Unreachable::Lookup)?
        .collect(),
    };
    destinations
        .filter(&request.host, resolved)
        .map_err(Unreachable::Local)
}

/// Connects to the first of `addresses` that answers: these addresses, checked, and no
/// name that could resolve again to another one.
async fn connect(addresses: &[SocketAddr]) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    for address in addresses {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(*address)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(err)) => last = err,
            Err(_) => last = timed_out("connect timed out"),
        }
    }
    Err(last)
}

fn timed_out(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, what.to_string())
}
