//! The sandbox's one way out when its network is off and a network proxy is configured: in
//! the sandbox's new network namespace (which has nothing but a loopback device, so the
//! kernel routes nowhere else), the helper brings `lo` up, listens on `127.0.0.1:PORT` and
//! relays every connection to the runtime's proxy socket (a host Unix socket, reachable
//! because pathname sockets are found through the filesystem, not the network namespace).
//! The command gets `HTTP_PROXY`/`HTTPS_PROXY` pointing there; seccomp lets it open
//! AF_INET/AF_INET6 sockets (they reach only this namespace's loopback) and Landlock, where
//! the kernel has it, lets it connect to that one TCP port only.

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::Path;

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

/// One relayed connection: the command's TCP side and the proxy's Unix side, each
/// direction open until its reader saw the end.
struct Pair {
    client: TcpStream,
    upstream: UnixStream,
    client_open: bool,
    upstream_open: bool,
}

/// Relays every connection of `listener` to `socket` until `child` (the command) exits,
/// then returns its exit code (128 + signal when killed). Single-threaded: after
/// `unshare(CLONE_NEWPID)` this process may not create threads, and the relay must not
/// live in the command's PID namespace (where the command could reach it), so it is a
/// `poll` loop in the helper's parent half, which would only wait otherwise.
pub fn relay_until_exit(listener: TcpListener, socket: &Path, child: Pid) -> Result<i32, String> {
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("network proxy bridge: {e}"))?;
    let mut pairs: Vec<Pair> = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match waitpid(child, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(_, code)) => return Ok(code),
            Ok(WaitStatus::Signaled(_, signal, _)) => return Ok(128 + signal as i32),
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(format!("waiting for the sandbox: {e}")),
        }
        let mut fds = vec![PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
        for pair in &pairs {
            let flags = |open: bool| {
                if open {
                    PollFlags::POLLIN
                } else {
                    PollFlags::empty()
                }
            };
            fds.push(PollFd::new(pair.client.as_fd(), flags(pair.client_open)));
            fds.push(PollFd::new(
                pair.upstream.as_fd(),
                flags(pair.upstream_open),
            ));
        }
        // The timeout bounds how late the command's exit is noticed.
        match poll(&mut fds, PollTimeout::from(100u16)) {
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(format!("network proxy bridge: poll: {e}")),
        }
        let ready: Vec<bool> = fds
            .iter()
            .map(|fd| {
                fd.revents().is_some_and(|r| {
                    r.intersects(PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR)
                })
            })
            .collect();
        drop(fds);
        for (i, pair) in pairs.iter_mut().enumerate() {
            if ready[1 + 2 * i] && pair.client_open {
                pair.client_open = pump(&mut pair.client, &mut pair.upstream, &mut buf);
            }
            if ready[2 + 2 * i] && pair.upstream_open {
                pair.upstream_open = pump(&mut pair.upstream, &mut pair.client, &mut buf);
            }
        }
        pairs.retain(|p| p.client_open || p.upstream_open);
        if ready[0] {
            while let Ok((client, _)) = listener.accept() {
                if let Some(pair) = open_pair(client, socket) {
                    pairs.push(pair);
                }
            }
        }
    }
}

fn open_pair(mut client: TcpStream, socket: &Path) -> Option<Pair> {
    // Accepted sockets do not inherit O_NONBLOCK: reads happen only after poll said so,
    // and writes block (the proxy reads promptly; a command that stops reading stalls only
    // its own connections until it exits).
    let _ = client.set_nonblocking(false);
    match UnixStream::connect(socket) {
        Ok(upstream) => Some(Pair {
            client,
            upstream,
            client_open: true,
            upstream_open: true,
        }),
        Err(_) => {
            let _ = client.write_all(
                b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            );
            None
        }
    }
}

/// Moves what is readable from `from` to `to`; false once `from` ended (then `to` is told).
fn pump<R, W>(from: &mut R, to: &mut W, buf: &mut [u8]) -> bool
where
    R: Read,
    W: Write + HalfClose,
{
    match from.read(buf) {
        Ok(0) | Err(_) => {
            to.close_write();
            false
        }
        Ok(n) => {
            if to.write_all(&buf[..n]).is_err() {
                to.close_write();
                return false;
            }
            true
        }
    }
}

/// Shutting down the write half of either kind of socket.
trait HalfClose {
    fn close_write(&mut self);
}

impl HalfClose for TcpStream {
    fn close_write(&mut self) {
        let _ = self.shutdown(Shutdown::Write);
    }
}

impl HalfClose for UnixStream {
    fn close_write(&mut self) {
        let _ = self.shutdown(Shutdown::Write);
    }
}
