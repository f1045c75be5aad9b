//! The zygote's control channel: one `SOCK_SEQPACKET` socket, one JSON message per packet,
//! file descriptors (a command's stdout and stderr pipes) passed alongside as `SCM_RIGHTS`.
//!
//! Both ends use these functions: the zygote blocking, the runtime on a non-blocking socket
//! (where `EAGAIN` tells it to wait for readiness).

use nix::sys::socket::{recvmsg, sendmsg, ControlMessage, ControlMessageOwned, MsgFlags};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{IoSlice, IoSliceMut};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use thiserror::Error;

/// First argument that turns the helper binary into a zygote.
pub const ZYGOTE_ARG: &str = "--troupe-sandbox-zygote";
/// Descriptor number of the control socket in the zygote.
pub const CONTROL_FD: RawFd = 3;
/// Largest message; bigger requests (huge scripts or environments) use the one-shot helper.
pub const MAX_MESSAGE: usize = 64 * 1024;
/// Most descriptors one message carries.
const MAX_FDS: usize = 2;

/// Runtime → zygote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    /// Run a command; carries its stdout and stderr (write ends) as descriptors.
    Spawn {
        id: u64,
        argv: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: PathBuf,
    },
    /// SIGKILL one command (its whole PID namespace goes with it).
    Kill { id: u64 },
    /// SIGKILL every running command.
    KillAll,
}

/// Zygote → runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// The sandbox is built; requests may follow.
    Ready,
    /// The sandbox could not be built; the zygote exits.
    SetupFailed { message: String },
    /// A protected path changed since the view was built: this zygote must not run the
    /// command (nothing ran); start a fresh one.
    Stale { id: u64 },
    /// The command could not be started (nothing ran).
    SpawnFailed { id: u64, message: String },
    /// The command ended: its exit code, or 128 + the signal that killed it.
    Exited { id: u64, code: i32 },
}

#[derive(Debug, Error)]
pub enum WireError {
    #[error("control socket: {0}")]
    Io(#[from] nix::Error),
    #[error("control message of {0} bytes is larger than {MAX_MESSAGE}")]
    TooLarge(usize),
    #[error("control message was truncated")]
    Truncated,
    #[error("undecodable control message: {0}")]
    Decode(#[from] serde_json::Error),
}

/// Encodes `message`, refusing what one packet cannot carry.
pub fn encode(message: &impl Serialize) -> Result<Vec<u8>, WireError> {
    let bytes = serde_json::to_vec(message)?;
    if bytes.len() > MAX_MESSAGE {
        return Err(WireError::TooLarge(bytes.len()));
    }
    Ok(bytes)
}

/// Sends one encoded message with `fds` (duplicated into the receiver; the caller keeps and
/// closes its own copies).
pub fn send(socket: BorrowedFd<'_>, bytes: &[u8], fds: &[RawFd]) -> Result<(), WireError> {
    let iov = [IoSlice::new(bytes)];
    let rights = [ControlMessage::ScmRights(fds)];
    let control: &[ControlMessage] = if fds.is_empty() { &[] } else { &rights };
    sendmsg::<()>(
        socket.as_raw_fd(),
        &iov,
        control,
        MsgFlags::MSG_NOSIGNAL,
        None,
    )?;
    Ok(())
}

/// A receive buffer for [`recv`], allocated once per receiver.
pub fn buffer() -> Vec<u8> {
    vec![0u8; MAX_MESSAGE]
}

/// Receives one message (into `buffer`, from [`buffer`]) and the descriptors that came with
/// it; `None` at end of stream (the other side closed).
pub fn recv<T: DeserializeOwned>(
    socket: BorrowedFd<'_>,
    buffer: &mut [u8],
) -> Result<Option<(T, Vec<OwnedFd>)>, WireError> {
    let mut space = nix::cmsg_space!([RawFd; MAX_FDS]);
    let mut iov = [IoSliceMut::new(&mut *buffer)];
    let message = recvmsg::<()>(
        socket.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )?;
    let mut fds = Vec::new();
    for cmsg in message.cmsgs()? {
        if let ControlMessageOwned::ScmRights(received) = cmsg {
            // SAFETY: the kernel just installed these descriptors for us; nothing else owns them.
            fds.extend(
                received
                    .into_iter()
                    .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
            );
        }
    }
    let truncated = message
        .flags
        .intersects(MsgFlags::MSG_TRUNC | MsgFlags::MSG_CTRUNC);
    let len = message.bytes;
    if truncated {
        return Err(WireError::Truncated);
    }
    if len == 0 {
        return Ok(None);
    }
    Ok(Some((serde_json::from_slice(&buffer[..len])?, fds)))
}
