//! `troupe/thread/lastTurns`: how each thread's last turn ended, for a list that does not
//! follow it, and whether another process holds it open. The index says `running` for any
//! thread whose rollout lock a live process holds, idle or not; a thread held elsewhere is
//! read from its rollout to tell a running turn from an idle thread.

use crate::hub::Hub;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;
use troupe_actors::rollout_recorder::{loader, lock};
use troupe_actors::thread_store::summary::summarize;
use troupe_app_server_protocol::protocol::{
    HeldBy, LastTurn, LastTurnStatus, LastTurnsParams, LastTurnsResponse,
};
use troupe_messages::threads::{ThreadStatus as Indexed, ThreadSummary};

pub(crate) fn thread_last_turns(hub: &Arc<Hub>, params: Value) -> Result<Value, String> {
    let params: LastTurnsParams = serde_json::from_value(params).map_err(|e| e.to_string())?;
    if params.thread_ids.len() > 200 {
        return Err(format!(
            "at most 200 thread ids at once, not {}",
            params.thread_ids.len()
        ));
    }
    let data = params
        .thread_ids
        .iter()
        .filter_map(|id| hub.summary(id).ok())
        .map(|summary| last_turn(&summary))
        .collect();
    serde_json::to_value(LastTurnsResponse { data }).map_err(|e| e.to_string())
}

/// One thread's answer; a thread another live process holds is read from its rollout.
pub fn last_turn(summary: &ThreadSummary) -> LastTurn {
    let holder = lock::holder(&summary.rollout_path).filter(|pid| *pid != std::process::id());
    let status = match holder {
        Some(_) => read_status(&summary.rollout_path).unwrap_or(status_of(summary.status)),
        None => status_of(summary.status),
    };
    LastTurn {
        thread_id: summary.id.to_string(),
        status,
        held_by: holder.map(|pid| HeldBy {
            pid,
            program: holder_program(pid),
        }),
    }
}

/// The last turn's status as a held thread's rollout tells it: an open turn in a rollout whose
/// writer lives is a turn running there now. A page asks at every poll, so the answer is kept
/// until the file's length or modification time changes.
fn read_status(path: &Path) -> Option<LastTurnStatus> {
    type Cache = HashMap<PathBuf, ((u64, Option<SystemTime>), LastTurnStatus)>;
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let meta = std::fs::metadata(path).ok()?;
    let stamp = (meta.len(), meta.modified().ok());
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some((known, status)) = lock_cache(cache).get(path) {
        if *known == stamp {
            return Some(*status);
        }
    }
    let status = match summarize(&loader::load(path).ok()?, false).status {
        Indexed::Incomplete | Indexed::Running => LastTurnStatus::Running,
        other => status_of(other),
    };
    let mut cache = lock_cache(cache);
    // Bounded: a long-lived server forgets what it read once it holds many.
    if cache.len() >= 1024 {
        cache.clear();
    }
    cache.insert(path.to_path_buf(), (stamp, status));
    Some(status)
}

fn lock_cache<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn status_of(status: Indexed) -> LastTurnStatus {
    match status {
        Indexed::New => LastTurnStatus::New,
        Indexed::Running => LastTurnStatus::Running,
        Indexed::Completed => LastTurnStatus::Completed,
        Indexed::Interrupted => LastTurnStatus::Interrupted,
        Indexed::Failed => LastTurnStatus::Failed,
        Indexed::Incomplete => LastTurnStatus::Incomplete,
    }
}

/// The first words of a process's command line (`troupe app-server --listen`), when readable.
pub(crate) fn holder_program(pid: u32) -> Option<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .map(|raw| {
            raw.split(|b| *b == 0)
                .filter(|arg| !arg.is_empty())
                .take(3)
                .map(|arg| String::from_utf8_lossy(arg).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|line| !line.is_empty())
}
