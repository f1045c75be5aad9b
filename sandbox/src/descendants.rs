//! Every process a command leaves behind, found and killed.
//!
//! Killing a command's process group is not enough: a command may start a daemon with
//! `setsid` (a new session and group) or double-fork. The runtime makes this process a
//! *child subreaper* ([`become_subreaper`]), so such orphans are re-parented to it instead of
//! to init, and sweeps them here:
//! - at the end of each turn, the `none` backend kills the orphans that came from its
//!   commands ([`sweep_orphans`]): children of ours carrying its run marker in their
//!   environment, or still in one of its process groups or sessions;
//! - when a frontend exits (or gives up on a second Ctrl-C), every descendant is killed
//!   ([`kill_all_descendants`]).
//!
//! A subtree is frozen with SIGSTOP (a stopped process cannot fork) until a fresh look at
//! `/proc` finds nothing new, then killed with SIGKILL, and the orphans re-parented to us are
//! reaped (tokio only reaps the children it spawned).

use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

/// Environment variable each command of the `none` backend gets: which backend (turn) ran it.
pub const RUN_MARKER_VAR: &str = "TROUPE_RUN_ID";

/// How long a sweep keeps trying (re-looking, reaping) before it gives up.
const SWEEP_PATIENCE: Duration = Duration::from_secs(2);

/// The name (`/proc/PID/comm`) a sandbox's placeholder cleaner gives itself.
pub const CLEANER_NAME: &str = "troupe-cleaner";
/// How long [`kill_all_descendants`] lets placeholder cleaners finish before killing
/// everything. A command that names itself like a cleaner gains this delay and nothing else.
const CLEANER_GRACE: Duration = Duration::from_secs(2);

/// One line of `/proc/PID/stat`, the fields we need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: i32,
    pub state: char,
    pub ppid: i32,
    pub pgid: i32,
    pub sid: i32,
}

/// Parses `/proc/PID/stat`; the command name (field 2) may hold spaces and parentheses, so
/// the fields are read after its *last* `)`.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text.get(..open)?.trim().parse().ok()?;
    let mut rest = text.get(close + 1..)?.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    let pgid = rest.next()?.parse().ok()?;
    let sid = rest.next()?.parse().ok()?;
    Some(ProcStat {
        pid,
        state,
        ppid,
        pgid,
        sid,
    })
}

/// Every process visible in `/proc` now.
pub fn snapshot() -> Vec<ProcStat> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| parse_stat(&read_stat(pid)?))
        .collect()
}

/// `/proc/PID/stat` in one `read` (the line is a few hundred bytes: the command name is at
/// most 16), without the size probe and extra reads of `read_to_string`: interrupts and
/// turn ends scan every process, so each costs three system calls instead of nine. procfs
/// hands out the whole line at the first read when the buffer holds it, so a read that
/// leaves room is the end (no second read to see end of file).
pub fn read_stat(pid: i32) -> Option<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(format!("/proc/{pid}/stat")).ok()?;
    let mut buf = [0u8; 1024];
    let mut len = 0;
    while len < buf.len() {
        match file.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) if len + n < buf.len() => {
                len += n;
                break;
            }
            Ok(n) => len += n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(String::from_utf8_lossy(&buf[..len]).into_owned())
}

/// The processes whose parent is this one.
fn children_of_me(me: i32) -> Vec<ProcStat> {
    snapshot().into_iter().filter(|p| p.ppid == me).collect()
}

/// `roots` and all their descendants in `procs`.
pub fn subtree(procs: &[ProcStat], roots: &[i32]) -> BTreeSet<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for proc in procs {
        children.entry(proc.ppid).or_default().push(proc.pid);
    }
    let mut found = BTreeSet::new();
    let mut stack = roots.to_vec();
    while let Some(pid) = stack.pop() {
        if found.insert(pid) {
            stack.extend(children.get(&pid).into_iter().flatten().copied());
        }
    }
    found
}

/// Makes orphans of our descendants our children (instead of init's), so they can be found
/// and killed. Idempotent.
pub fn become_subreaper() -> nix::Result<()> {
    nix::sys::prctl::set_child_subreaper(true)
}

/// Whether `pid`'s environment (as it was exec'd) holds `VAR=value`.
fn environ_has(pid: i32, var: &str, value: &str) -> bool {
    let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let wanted = format!("{var}={value}");
    environ
        .split(|b| *b == 0)
        .any(|entry| entry == wanted.as_bytes())
}

/// Whether a live descendant of `me` is a placeholder cleaner.
fn cleaner_running(me: i32) -> bool {
    let procs = snapshot();
    let tree = subtree(&procs, &[me]);
    procs.iter().any(|p| {
        p.pid != me
            && p.state != 'Z'
            && tree.contains(&p.pid)
            && std::fs::read_to_string(format!("/proc/{}/comm", p.pid))
                .is_ok_and(|comm| comm.trim_end() == CLEANER_NAME)
    })
}

/// Freezes then kills `roots` and every descendant (never this process); returns how many.
pub fn kill_trees(roots: &[i32]) -> usize {
    freeze_and_kill(roots).len()
}

/// Freezes then kills every descendant of `root`, sparing `root` itself; returns how many.
pub fn kill_below(root: i32) -> usize {
    freeze_and_kill_sparing(&[root], root).len()
}

/// Freezes then kills `roots` and every descendant; returns what was killed.
fn freeze_and_kill(roots: &[i32]) -> BTreeSet<i32> {
    freeze_and_kill_sparing(roots, std::process::id() as i32)
}

/// [`freeze_and_kill`], never touching `spared` (nor this process).
fn freeze_and_kill_sparing(roots: &[i32], spared: i32) -> BTreeSet<i32> {
    let me = std::process::id() as i32;
    let mut frozen: BTreeSet<i32> = BTreeSet::new();
    // A process forking while we look: stop what we see, look again, until nothing is new.
    for _ in 0..16 {
        let procs = snapshot();
        let mut tree = subtree(&procs, roots);
        tree.remove(&me);
        tree.remove(&spared);
        let new: Vec<i32> = tree.difference(&frozen).copied().collect();
        if new.is_empty() {
            break;
        }
        for pid in new {
            let _ = kill(Pid::from_raw(pid), Signal::SIGSTOP);
            frozen.insert(pid);
        }
    }
    for pid in &frozen {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
    }
    frozen
}

/// Reaps the zombies among our children that are in `ours` (the orphans we killed; a child
/// tokio spawned is never reaped here, its own `wait` would lose the status).
fn reap_ours(ours: &HashSet<i32>) -> bool {
    if ours.is_empty() {
        return false;
    }
    let me = std::process::id() as i32;
    let mut pending = false;
    for proc in children_of_me(me) {
        if !ours.contains(&proc.pid) {
            continue;
        }
        let status = waitpid(Pid::from_raw(proc.pid), Some(WaitPidFlag::WNOHANG));
        if let Ok(WaitStatus::StillAlive) = status {
            pending = true;
        }
    }
    pending
}

/// What identifies the orphans of one backend.
pub struct OrphanFilter<'a> {
    /// The value of [`RUN_MARKER_VAR`] its commands got.
    pub marker: &'a str,
    /// Every process group it started (a daemon that did not `setsid` keeps its group; one
    /// that did keeps the session only when it forked again without a new one).
    pub groups: &'a HashSet<i32>,
    /// Whether each of those groups was also a session of its own, so an orphan still in
    /// that session is the backend's too.
    pub groups_lead_sessions: bool,
    /// Children still owned by a running call (never touched).
    pub running: &'a HashSet<i32>,
}

/// Kills the orphans re-parented to us that came from one backend's commands, with their
/// descendants, and reaps them. Returns how many processes were killed.
pub fn sweep_orphans(filter: &OrphanFilter<'_>) -> usize {
    let me = std::process::id() as i32;
    let deadline = Instant::now() + SWEEP_PATIENCE;
    let mut killed: HashSet<i32> = HashSet::new();
    loop {
        let orphans: Vec<i32> = children_of_me(me)
            .into_iter()
            .filter(|p| p.state != 'Z' && !filter.running.contains(&p.pid))
            .filter(|p| {
                killed.contains(&p.pid)
                    || filter.groups.contains(&p.pgid)
                    || (filter.groups_lead_sessions && filter.groups.contains(&p.sid))
                    || environ_has(p.pid, RUN_MARKER_VAR, filter.marker)
            })
            .map(|p| p.pid)
            .collect();
        if !orphans.is_empty() {
            killed.extend(freeze_and_kill(&orphans));
        }
        // Grandchildren of a killed orphan are re-parented to us once it dies: look again.
        let pending = reap_ours(&killed);
        if (orphans.is_empty() && !pending) || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    killed.len()
}

/// Kills every descendant of this process (commands, their daemons, sandbox zygotes): the
/// last thing a frontend does. Children are not reaped (the process is about to exit, and
/// init reaps them).
/// Children the frontend's final sweep leaves running: programs the user asked to outlive
/// troupe (the `notify` program after a one-shot `exec`).
static SPARED: std::sync::Mutex<BTreeSet<i32>> = std::sync::Mutex::new(BTreeSet::new());

/// Leaves the child `pid` (and what it starts below itself) out of [`kill_all_descendants`].
pub fn spare(pid: i32) {
    SPARED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(pid);
}

/// Undoes [`spare`] once the child is reaped (its pid may be reused).
pub fn unspare(pid: i32) {
    SPARED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .remove(&pid);
}

fn spared() -> BTreeSet<i32> {
    SPARED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

pub fn kill_all_descendants() -> usize {
    let me = std::process::id() as i32;
    // A cleaner removes the empty `.git`/`.troupe` placeholders its sandbox made once the
    // sandbox is gone; killed first, it would leave them behind.
    let deadline = Instant::now() + CLEANER_GRACE;
    while cleaner_running(me) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let spared = spared();
    let mut killed = 0;
    // Each pass kills what is there; orphans of killed processes come back to us as
    // children, alive only if they escaped a pass, so a few passes settle it.
    for _ in 0..4 {
        let children: Vec<i32> = snapshot()
            .into_iter()
            .filter(|p| p.ppid == me && p.state != 'Z' && !spared.contains(&p.pid))
            .map(|p| p.pid)
            .collect();
        if children.is_empty() {
            break;
        }
        killed += freeze_and_kill(&children).len();
        std::thread::sleep(Duration::from_millis(5));
    }
    killed
}

#[cfg(test)]
#[path = "descendants_tests.rs"]
mod tests;
