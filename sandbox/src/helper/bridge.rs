//! The sandbox's one way out when its network is off and a network proxy is configured: in
//! the sandbox's new network namespace (which has nothing but a loopback device, so the
//! kernel routes nowhere else), the helper brings `lo` up, listens on `127.0.0.1:PORT` and
//! relays every connection to the runtime's proxy socket (a host Unix socket, reachable
//! because pathname sockets are found through the filesystem, not the network namespace).
//! The command gets `HTTP_PROXY`/`HTTPS_PROXY` pointing there; seccomp lets it open
//! AF_INET/AF_INET6 sockets (they reach only this namespace's loopback) and Landlock, where
//! the kernel has it, lets it connect to that one TCP port only.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// Brings the namespace's loopback up and listens on `127.0.0.1:port`. Called after
/// `unshare(CLONE_NEWNET)` (the helper holds CAP_NET_ADMIN in its user namespace then).
pub fn listen(port: u16) -> Result<TcpListener, String> {
    loopback_up()?;
    TcpListener::bind((Ipv4Addr::LOCALHOST, port))
        .map_err(|e| format!("network proxy bridge: cannot listen on 127.0.0.1:{port}: {e}"))
}

fn loopback_up() -> Result<(), String> {
    // SAFETY: a plain socket(2); the descriptor is closed below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(format!(
            "network proxy bridge: socket: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: ifreq is plain data; zeroed is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *dst = *src as libc::c_char;
    }
    // SAFETY: SIOCGIFFLAGS/SIOCSIFFLAGS read and write `req`, which outlives the calls.
    let result = unsafe {
        let ptr: *mut libc::ifreq = &mut req;
        if libc::ioctl(fd, libc::SIOCGIFFLAGS, ptr) < 0 {
            -1
        } else {
            (*ptr).ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            libc::ioctl(fd, libc::SIOCSIFFLAGS, ptr)
        }
    };
    let err = std::io::Error::last_os_error();
    // SAFETY: `fd` is ours.
    unsafe { libc::close(fd) };
    if result < 0 {
        return Err(format!("network proxy bridge: bringing lo up: {err}"));
    }
    Ok(())
}

/// Relays every connection of `listener` to `socket` on threads of this (helper parent)
/// process, which lives exactly as long as the command.
pub fn serve(listener: TcpListener, socket: PathBuf) {
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let socket = socket.clone();
            std::thread::spawn(move || relay(client, &socket));
        }
    });
}

fn relay(client: TcpStream, socket: &Path) {
    let Ok(upstream) = UnixStream::connect(socket) else {
        let mut client = client;
        let _ = client.write_all(
            b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
        );
        return;
    };
    let (Ok(client_read), Ok(upstream_write)) = (client.try_clone(), upstream.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || pump(client_read, upstream_write));
    let mut client_write = client;
    let mut upstream_read = upstream;
    let mut buf = [0u8; 16 * 1024];
    while let Ok(n) = upstream_read.read(&mut buf) {
        if n == 0 || client_write.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = client_write.shutdown(Shutdown::Write);
    let _ = up.join();
}

fn pump(mut from: TcpStream, mut to: UnixStream) {
    let mut buf = [0u8; 16 * 1024];
    while let Ok(n) = from.read(&mut buf) {
        if n == 0 || to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}
