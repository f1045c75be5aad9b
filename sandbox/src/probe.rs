//! Which backend this machine supports, decided once per process: `linux` needs user
//! namespaces, `landlock` needs a kernel that enforces Landlock. Neither → fail closed.

use crate::helper::HelperBackend;
use std::path::PathBuf;
use std::sync::OnceLock;
use troupe_messages::policy::SandboxBackendKind;

static HELPER_EXE: OnceLock<PathBuf> = OnceLock::new();
static USERNS: OnceLock<bool> = OnceLock::new();
static FALLBACK_WARNED: OnceLock<()> = OnceLock::new();

/// The one text of what the landlock backend leaves unprotected (see `helper/landlock_layer.rs`
/// for why), shared by the start-up warning, `troupe doctor` and the README.
macro_rules! landlock_limits {
    () => {
        "`.git` and `.troupe` inside writable roots are read-only except that a command can \
         create new empty files and directories in them; in a directory that holds them (the \
         workspace root) a command can create a new file or directory but not write into it in \
         the same command, and cannot remove, rename or link entries there; deny-read paths \
         (Troupe's stored keys among them) cannot be read, but the names in each directory \
         on the way to one stay listable and an entry added to such a directory after the \
         command started cannot be read by it; the network is cut by seccomp and Landlock only, \
         so while it is off no Unix socket can be opened (`socketpair` aside) unless \
         `allow_unix_sockets` names one, which then opens them all; chmod/utime/xattr changes to files you own stay \
         possible even outside the writable roots"
    };
}

/// What the landlock backend does not protect.
pub const LANDLOCK_LIMITS: &str = landlock_limits!();

/// Text of the one-time warning printed when the weaker backend is used.
pub const LANDLOCK_WARNING: &str = concat!(
    "sandbox: user namespaces are unavailable, using the landlock backend: ",
    landlock_limits!()
);

/// Warning when the user chose the landlock backend themselves.
pub const LANDLOCK_CHOSEN_WARNING: &str = concat!(
    "sandbox: the landlock backend protects less than the linux one: ",
    landlock_limits!()
);

/// Name of the dedicated helper binary installed next to `troupe`.
pub const HELPER_BINARY: &str = "troupe-sandbox";

/// Overrides the helper binary (tests run from a test binary, not `troupe`).
pub fn set_helper_exe(path: PathBuf) {
    let _ = HELPER_EXE.set(path);
}

/// The binary to re-execute as the helper.
pub fn helper_exe() -> Result<PathBuf, String> {
    if let Some(path) = HELPER_EXE.get() {
        return Ok(path.clone());
    }
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find the troupe binary for the sandbox helper: {e}"))?;
    // The small dedicated helper starts faster; `troupe` itself is the fallback.
    let small = exe.with_file_name(HELPER_BINARY);
    Ok(if small.is_file() { small } else { exe })
}

/// The binary that can act as the spawn trampoline (`spawn_trampoline.rs`): the helper set
/// for tests, `troupe-sandbox` next to this executable, or this executable itself when its
/// `main` runs the helper personalities (whatever the file is called). None when this
/// process is something else (a library's test binary), which then forks as before.
pub fn trampoline_exe() -> Option<&'static std::path::Path> {
    static TRAMPOLINE: OnceLock<Option<PathBuf>> = OnceLock::new();
    TRAMPOLINE
        .get_or_init(|| {
            if let Some(path) = HELPER_EXE.get() {
                return Some(path.clone());
            }
            let exe = std::env::current_exe().ok()?;
            let small = exe.with_file_name(HELPER_BINARY);
            trampoline_for(exe, small.is_file(), crate::helper::runs_helpers())
        })
        .as_deref()
}

/// The trampoline binary: the small helper beside `exe` if there is one, else `exe` if it
/// dispatches the trampoline argument itself.
fn trampoline_for(exe: PathBuf, small_beside: bool, exe_runs_helpers: bool) -> Option<PathBuf> {
    if small_beside {
        return Some(exe.with_file_name(HELPER_BINARY));
    }
    exe_runs_helpers.then_some(exe)
}

/// Whether this process may create a user namespace (probed in a throwaway child).
pub fn user_namespaces_work() -> bool {
    *USERNS.get_or_init(|| {
        let max = std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
            .unwrap_or(1);
        max > 0 && probe_unshare()
    })
}

fn probe_unshare() -> bool {
    // SAFETY: the child only calls unshare(2) and _exit(2), both async-signal-safe, so forking
    // from a multi-threaded process is sound here.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            let rc = libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS);
            libc::_exit(if rc == 0 { 0 } else { 1 });
        }
        if pid < 0 {
            return false;
        }
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0) == pid
            && libc::WIFEXITED(status)
            && libc::WEXITSTATUS(status) == 0
    }
}

/// The backend `kind` resolves to here, in words, with what it does not protect: what
/// `troupe doctor` reports.
pub fn describe(kind: SandboxBackendKind) -> String {
    match choose_quietly(kind) {
        Ok(HelperBackend::Linux) => "linux (namespaces, mount view, seccomp, Landlock)".into(),
        Ok(HelperBackend::Landlock) => format!("landlock; not protected: {LANDLOCK_LIMITS}"),
        Err(err) => format!("none available: {err}"),
    }
}

/// Whether the kernel enforces Landlock (ABI version ≥ 1).
pub fn landlock_works() -> bool {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the version query takes no pointers.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    abi >= 1
}

/// The backend to use for `kind`; an error says why nothing can confine commands here.
pub fn choose(kind: SandboxBackendKind) -> Result<HelperBackend, String> {
    let chosen = choose_quietly(kind)?;
    if chosen == HelperBackend::Landlock
        && kind == SandboxBackendKind::Auto
        && FALLBACK_WARNED.set(()).is_ok()
    {
        tracing::warn!("{LANDLOCK_WARNING}");
    }
    Ok(chosen)
}

fn choose_quietly(kind: SandboxBackendKind) -> Result<HelperBackend, String> {
    match kind {
        SandboxBackendKind::Linux if user_namespaces_work() => Ok(HelperBackend::Linux),
        SandboxBackendKind::Linux => Err("sandbox backend `linux` needs user namespaces, which \
            this system does not allow; set sandbox.backend = \"landlock\" or use \
            danger-full-access in a disposable environment"
            .into()),
        SandboxBackendKind::Landlock if landlock_works() => Ok(HelperBackend::Landlock),
        SandboxBackendKind::Landlock => Err("sandbox backend `landlock` needs a kernel with \
            Landlock enabled (5.13+, lsm=landlock)"
            .into()),
        SandboxBackendKind::Auto if user_namespaces_work() => Ok(HelperBackend::Linux),
        SandboxBackendKind::Auto if landlock_works() => Ok(HelperBackend::Landlock),
        SandboxBackendKind::Auto => Err("no sandbox is available: user namespaces are \
            disabled and the kernel does not enforce Landlock; commands will not run \
            unconfined unless you choose danger-full-access"
            .into()),
    }
}

#[cfg(test)]
#[path = "probe_tests.rs"]
mod tests;
