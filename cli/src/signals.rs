//! SIGINT, SIGTERM and SIGHUP during `troupe exec` and the servers (`app-server`, `web`,
//! `mcp-server`): the first one interrupts the running turns through the runtime (their
//! processes killed, each turn recorded as aborted, the rollouts flushed and their locks
//! released) and the exit status says which signal it was (128 + number, as a shell reports a
//! process killed by it); a second one exits at once after killing every process troupe
//! started.

use std::future::Future;
use std::process::ExitCode;
use std::time::Duration;
use tokio::signal::unix::{signal, Signal, SignalKind};
use troupe_actors::runtime::Runtime;

/// How long a stopping server waits for its threads to record their ends.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

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

/// How a server's run ended.
enum Ended {
    Served(anyhow::Result<()>),
    Signal(StopSignal),
}

/// Runs `serve` (a server over `runtime`) until it ends by itself (its client went away) or a
/// stop signal comes. Either way every open thread's turn is ended and recorded and its lock
/// released before this returns ([`Runtime::shutdown`]), and what the commands left running
/// is killed; a second signal meanwhile stops at once ([`give_up`]). `signals` must be
/// installed before the runtime starts, so that no signal finds the default action.
pub async fn serve_until_stopped(
    runtime: &Runtime,
    signals: &mut StopSignals,
    serve: impl Future<Output = anyhow::Result<()>>,
) -> anyhow::Result<ExitCode> {
    let ended = tokio::select! {
        served = serve => Ended::Served(served),
        signal = signals.next() => Ended::Signal(signal),
    };
    if let Ended::Signal(signal) = &ended {
        crate::output::warn(format!(
            "{} received: ending the running turns (send it again to stop at once)",
            signal.name()
        ));
    }
    tokio::select! {
        () = runtime.shutdown(SHUTDOWN_GRACE) => {}
        signal = signals.next() => {
            let first = match &ended {
                Ended::Signal(first) => *first,
                Ended::Served(_) => signal,
            };
            return Ok(give_up(first));
        }
    }
    tokio::task::spawn_blocking(troupe_sandbox::descendants::kill_all_descendants)
        .await
        .ok();
    match ended {
        Ended::Signal(signal) => Ok(signal.exit_code()),
        Ended::Served(result) => result.map(|()| ExitCode::SUCCESS),
    }
}
