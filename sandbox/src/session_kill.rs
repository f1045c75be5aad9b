//! Killing a whole session: every confined helper is started as the leader of a new session
//! ([`crate::containment::Containment::Session`]), so its session id is its pid. A descendant that moved to another process group (`setpgid`)
//! escapes `killpg` but not this. (Under the `landlock` backend seccomp refuses `setsid`, so
//! no descendant can leave the session either; the `linux` backend has PID namespaces.)

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// How many scans of `/proc` before giving up on processes that keep forking.
const ROUNDS: usize = 16;

/// Sends SIGKILL to every process whose session is `sid`, until none is left (or after
/// [`ROUNDS`] scans). Reads `/proc`, so it is meant for the rare paths (timeout, interrupt,
/// end of a `landlock` command), not every spawn.
pub fn kill_session(sid: i32) {
    for _ in 0..ROUNDS {
        let members = session_members(sid);
        if members.is_empty() {
            return;
        }
        for pid in members {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}

/// Live pids (other than this process) whose session is `sid`. Zombies are left out: they
/// hold no resources and ignore signals, and one re-parented to this process (a child
/// subreaper) stays until the orphan sweep reaps it, so counting it would make
/// [`kill_session`] rescan `/proc` for all its rounds.
pub fn session_members(sid: i32) -> Vec<i32> {
    let own = std::process::id() as i32;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != own)
        .filter(|&pid| {
            crate::descendants::read_stat(pid)
                .filter(|stat| !is_dead(stat))
                .and_then(|stat| session_of(&stat))
                == Some(sid)
        })
        .collect()
}

/// The session field of a `/proc/PID/stat` line: the fourth after the command name, which
/// is in parentheses and may itself hold spaces or parentheses.
pub fn session_of(stat: &str) -> Option<i32> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(3)?.parse().ok()
}

/// Whether a `/proc/PID/stat` line is of a zombie (`Z`) or a dead (`X`, `x`) process.
pub fn is_dead(stat: &str) -> bool {
    let state = stat
        .rfind(')')
        .and_then(|end| stat[end + 1..].split_whitespace().next());
    matches!(state, Some("Z" | "X" | "x"))
}

#[cfg(test)]
mod tests {
    use super::{is_dead, session_of};

    #[test]
    fn zombies_and_dead_processes_are_told_apart_from_live_ones() {
        assert!(is_dead("42 (sleep) Z 1 42 40 0 -1"));
        assert!(is_dead("42 (a) Z (b) X 1 42 40"));
        assert!(!is_dead("42 (a) Z (b) S 1 42 40"));
        assert!(!is_dead("42 (sh) S 1 42 40 0 -1"));
        assert!(!is_dead("garbage"));
    }

    #[test]
    fn the_session_field_is_found_after_any_command_name() {
        assert_eq!(session_of("42 (sh) S 1 42 40 0 -1"), Some(40));
        assert_eq!(session_of("42 (a) b (c) S 1 42 41 0 -1"), Some(41));
        assert_eq!(session_of("garbage"), None);
    }
}
