//! How a backend's commands are set apart from the runtime and from one another, and how
//! they are killed as a whole.
//!
//! Either way a command has no controlling terminal: it can neither read what the user types
//! nor push keystrokes into the terminal (`TIOCSTI` needs the terminal to be the caller's
//! controlling one, or `CAP_SYS_ADMIN`), and `/dev/tty` does not open (`ENXIO`). A process
//! that does not lead its session can never gain a controlling terminal again (only a session
//! leader acquires one), so dropping it once, before exec, holds for the command's lifetime.

/// What the spawner makes of each command before it execs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Containment {
    /// The command leads a new session (so a new process group). A descendant that moves to
    /// another group stays in the session, and the session is killed as a whole. The
    /// confined backends' helpers need this: the `landlock` helper kills the session it
    /// leads once its command exits, and seccomp keeps everything in it.
    #[default]
    Session,
    /// The command leads a new process group inside the runtime's session and drops the
    /// controlling terminal. Used for unconfined (`none`) commands: where the scheduler
    /// groups processes by session (`kernel.sched_autogroup_enabled` with every process in
    /// the root cpu cgroup), a session per command would make each command weigh as much
    /// as the whole runtime, so a hundred busy commands starve the turn loop and the
    /// app-server's output. Killing follows the command's process tree and its group; what
    /// left both (a `setsid` daemon, a double fork) is re-parented to the runtime and swept
    /// by its run marker at the end of the turn.
    Group,
}

impl Containment {
    /// The trampoline argument naming this containment.
    pub fn as_arg(self) -> &'static str {
        match self {
            Containment::Session => "session",
            Containment::Group => "group",
        }
    }

    /// The containment a trampoline argument names.
    pub fn from_arg(arg: &str) -> Option<Self> {
        match arg {
            "session" => Some(Containment::Session),
            "group" => Some(Containment::Group),
            _ => None,
        }
    }

    /// Applies the containment to the calling process. Meant for the time between fork and
    /// exec (or a single-threaded trampoline): only async-signal-safe system calls, no
    /// allocation.
    ///
    /// # Safety
    /// Changes the calling process's session or group and terminal; the caller must be the
    /// process about to exec the command.
    pub unsafe fn enter(self) -> std::io::Result<()> {
        match self {
            Containment::Session => {
                if libc::setsid() == -1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Containment::Group => {
                if !drop_controlling_terminal() {
                    // The terminal could not be dropped (no `/dev/tty` node in this mount
                    // namespace, say): a session of its own leaves it behind for certain.
                    // Group ids stay as they would be (a session leader leads its group).
                    if libc::setsid() == -1 {
                        return Err(std::io::Error::last_os_error());
                    }
                } else if libc::setpgid(0, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
        }
        Ok(())
    }

    /// Kills the running commands whose pids (= their group ids) are `pids`, with what they
    /// started that is still in their group, tree or (for [`Containment::Session`]) session.
    /// Reads `/proc`, so it is meant for the rare paths (timeout, interrupt).
    pub fn kill(self, pids: &[i32]) {
        match self {
            Containment::Session => {
                for &pid in pids {
                    crate::process::kill_group(pid);
                    crate::session_kill::kill_session(pid);
                }
            }
            Containment::Group => {
                // The tree first, while the parent links still say whose each process is
                // (a killed parent's children are re-parented at once); then the groups,
                // for members that already left the tree (a double fork that kept it).
                crate::descendants::kill_trees(pids);
                for &pid in pids {
                    crate::process::kill_group(pid);
                }
            }
        }
    }

    /// Whether an orphan still in one of a backend's command *sessions* is one of its own:
    /// only when each command had a session of its own (under [`Containment::Group`] every
    /// command shares the runtime's session, which says nothing about whose an orphan is).
    pub fn sessions_identify_commands(self) -> bool {
        self == Containment::Session
    }
}

/// Detaches the calling process (not a session leader) from its controlling terminal, if it
/// has one; false when it may still have one. For a process that does not lead its session,
/// `TIOCNOTTY` only clears its own link to the terminal: the session, its foreground group
/// and the terminal itself are untouched.
unsafe fn drop_controlling_terminal() -> bool {
    let tty = libc::open(
        c"/dev/tty".as_ptr(),
        libc::O_RDWR | libc::O_NOCTTY | libc::O_NONBLOCK | libc::O_CLOEXEC,
    );
    if tty == -1 {
        // ENXIO: the process has no controlling terminal.
        return *libc::__errno_location() == libc::ENXIO;
    }
    let detached = libc::ioctl(tty, libc::TIOCNOTTY) == 0;
    libc::close(tty);
    detached
}
