//! SIGINT, SIGTERM and SIGHUP during `troupe exec`: the first one interrupts the turn through
//! the runtime (its processes killed, the turn recorded as interrupted, the rollout flushed and
//! its lock released) and the exit status says which signal it was (128 + number, as a shell
//! reports a process killed by it); a second one exits at once after killing every process
//! troupe started.

use std::process::ExitCode;
use tokio::signal::unix::{signal, Signal, SignalKind};

/// A signal asking troupe to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    Interrupt,
    Terminate,
    HangUp,
}

impl StopSignal {
    /// 128 + the signal's number.
    pub fn exit_code(self) -> ExitCode {
        ExitCode::from(match self {
            StopSignal::Interrupt => 130,
            StopSignal::Terminate => 143,
            StopSignal::HangUp => 129,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            StopSignal::Interrupt => "SIGINT",
            StopSignal::Terminate => "SIGTERM",
            StopSignal::HangUp => "SIGHUP",
        }
    }
}

/// The three signals, caught from the moment this exists (their default action, dying on the
/// spot, would leave commands running and the rollout locked).
pub struct StopSignals {
    interrupt: Signal,
    terminate: Signal,
    hang_up: Signal,
}

impl StopSignals {
    pub fn install() -> std::io::Result<Self> {
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hang_up: signal(SignalKind::hangup())?,
        })
    }

    /// The next stop signal.
    pub async fn next(&mut self) -> StopSignal {
        tokio::select! {
            _ = self.interrupt.recv() => StopSignal::Interrupt,
            _ = self.terminate.recv() => StopSignal::Terminate,
            _ = self.hang_up.recv() => StopSignal::HangUp,
        }
    }
}

/// The second signal: kill every process troupe started (and their daemons), then exit.
pub fn give_up(first: StopSignal) -> ExitCode {
    troupe_sandbox::descendants::kill_all_descendants();
    crate::output::warn("stopped at once: commands killed; the thread may not be fully saved");
    first.exit_code()
}
