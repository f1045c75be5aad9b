//! The sandbox helper: the `troupe` binary re-executed with [`HELPER_ARG`] sets up the
//! confinement in a fresh, single-threaded process and then execs the command. Doing it here,
//! not between fork and exec of the multi-threaded runtime, keeps the setup free of
//! async-signal-safety traps and lets it use ordinary Rust (allocation, error strings).
#![allow(
    clippy::print_stderr,
    reason = "a sandbox helper reports its own failures on the stderr it shares with the command"
)]

mod bridge;
mod landlock_layer;
mod landlock_parent;
mod mounts;
mod privileges;
mod protected;
mod seccomp;
mod session;
mod sockets;
mod zygote;

use nix::sched::CloneFlags;
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::{fork, ForkResult};
use serde::{Deserialize, Serialize};
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use troupe_messages::permissions::ProxyBridge;
use troupe_messages::policy::{
    FileSystemPolicy, FileSystemSandboxKind, NetworkPolicy, PermissionProfile,
};

/// First argument that turns `troupe` into the helper.
pub const HELPER_ARG: &str = "--troupe-sandbox-helper";
/// Exit code of a helper that could not set the sandbox up (nothing was run).
pub const SETUP_FAILED_EXIT: i32 = 121;
/// Start of the helper's stderr line when setup failed.
pub const SETUP_FAILED_PREFIX: &str = "troupe sandbox: setup failed:";

/// Which mechanism the helper uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HelperBackend {
    /// Namespaces + mounts, then Landlock, caps, seccomp.
    Linux,
    /// Landlock, caps, seccomp; no namespaces.
    Landlock,
}

/// What the helper is told (JSON in one argument).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HelperSpec {
    pub backend: HelperBackend,
    pub profile: PermissionProfile,
    pub cwd: PathBuf,
    /// With the network off: the runtime's network proxy, bridged into the sandbox's
    /// network namespace (`bridge.rs`); the `linux` one-shot helper only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_proxy: Option<ProxyBridge>,
}

/// The argv that runs `command` under the helper at `exe`.
pub fn helper_argv(
    exe: &Path,
    spec: &HelperSpec,
    command: &[String],
) -> Result<Vec<String>, String> {
    let spec =
        serde_json::to_string(spec).map_err(|e| format!("encoding the sandbox spec: {e}"))?;
    let mut argv = vec![
        exe.display().to_string(),
        HELPER_ARG.to_string(),
        spec,
        "--".to_string(),
    ];
    argv.extend(command.iter().cloned());
    Ok(argv)
}

/// Set once this process's `main` has called [`run_if_helper`]: its executable dispatches
/// the helper arguments, so it can serve as its own spawn trampoline.
static RUNS_HELPERS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this executable's `main` dispatches the helper arguments.
pub fn runs_helpers() -> bool {
    RUNS_HELPERS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Runs the helper when `args[1]` is [`HELPER_ARG`]; call first thing in `main`, before any
/// thread exists. Never returns in that case.
pub fn run_if_helper() {
    RUNS_HELPERS.store(true, std::sync::atomic::Ordering::Relaxed);
    let args: Vec<OsString> = std::env::args_os().collect();
    let first = args.get(1).map(|a| a.as_bytes());
    if first == Some(crate::spawn_trampoline::SPAWN_ARG.as_bytes()) {
        std::process::exit(crate::spawn_trampoline::run(&args[2..]));
    }
    if first == Some(crate::supervisor::SUPERVISE_ARG.as_bytes()) {
        std::process::exit(crate::supervisor::run(&args[2..]));
    }
    if first == Some(crate::zygote_wire::ZYGOTE_ARG.as_bytes()) {
        std::process::exit(zygote::run(&args[2..]));
    }
    if first != Some(HELPER_ARG.as_bytes()) {
        return;
    }
    let code = match run(&args[2..]) {
        Ok(never) => match never {},
        Err(Failure::Setup(message)) => {
            eprintln!("{SETUP_FAILED_PREFIX} {message}");
            SETUP_FAILED_EXIT
        }
        Err(Failure::Exit(code)) => code,
    };
    std::process::exit(code);
}

enum Failure {
    /// The sandbox could not be built; nothing ran.
    Setup(String),
    /// The parent half relays the command's own exit.
    Exit(i32),
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::Setup(message)
    }
}

enum Never {}

fn run(args: &[OsString]) -> Result<Never, Failure> {
    let (spec, command) = parse_args(args)?;
    if !spec.cwd.is_absolute() {
        return Err(Failure::Setup(format!(
            "the working directory `{}` is relative; the sandbox needs an absolute path",
            spec.cwd.display()
        )));
    }
    let plan = Plan::from_spec(&spec)?;
    let leads_session = session::leads_own_session();
    match spec.backend {
        HelperBackend::Linux => {
            plan.enter_linux_view()?;
            // The command is the child forked into the new PID namespace: never a group
            // leader, so it can always start its own session.
            session::detach(leads_session).map_err(|e| Failure::Setup(format!("setsid: {e}")))?;
            let proxy_port = plan.proxy.as_ref().map(|p| p.port);
            Confinement::prepare(
                &plan.writable,
                &[],
                &[],
                plan.network_on,
                proxy_port,
                false,
                &[],
            )?
            .hiding(plan.hidden_outside_writable_roots())
            .exec(&spec.cwd, &command)
        }
        HelperBackend::Landlock => {
            if plan.proxy.is_some() {
                return Err(Failure::Setup(
                    "the network proxy needs the linux backend (a network namespace); the \
                     landlock backend cannot bridge it"
                        .into(),
                ));
            }
            if plan.writes_anywhere() {
                return Err(Failure::Setup(
                    "the landlock backend has no unrestricted mode; use the linux backend".into(),
                ));
            }
            leave_session_landlock(leads_session)?;
            // Without a mount view, Landlock alone keeps `.git`/`.troupe` read-only and the
            // deny-read paths (Troupe's stored keys among them) unreadable.
            let protected = plan.protected_subpaths();
            let hidden = &plan.file_system.deny_read;
            Confinement::prepare(
                &plan.writable,
                &protected,
                hidden,
                plan.network_on,
                None,
                true,
                &plan.file_system.allow_unix_sockets,
            )?
            .exec(&spec.cwd, &command)
        }
    }
}

/// The landlock backend has no PID namespace, so the helper forks and stays as the parent:
/// the child (never a group leader) can always start a session when it needs one, and once
/// it has exited, or troupe has died, the parent kills whatever is left in its session
/// (seccomp keeps anything from leaving it), so no daemon outlives the command
/// (`landlock_parent`).
fn leave_session_landlock(leads_session: bool) -> Result<(), Failure> {
    let helper = nix::unistd::getpid();
    let (troupe, mask) = landlock_parent::tie_to_troupe()?;
    // SAFETY: the helper is single-threaded, so the child may do anything.
    match unsafe { fork() }.map_err(|e| Failure::Setup(format!("fork: {e}")))? {
        ForkResult::Child => {
            landlock_parent::untie_child(&mask)?;
            if nix::unistd::getppid() != helper {
                return Err(Failure::Exit(crate::spawn_trampoline::PARENT_GONE_EXIT));
            }
            session::detach(leads_session).map_err(|e| Failure::Setup(format!("setsid: {e}")))
        }
        ForkResult::Parent { child } => {
            let session = if leads_session { helper } else { child };
            Err(landlock_parent::relay_exit(troupe, child, session))
        }
    }
}

/// What a managed profile means for the helper and the zygote alike.
struct Plan {
    file_system: FileSystemPolicy,
    /// Writable roots; `/` alone means "write anywhere".
    writable: Vec<PathBuf>,
    network_on: bool,
    /// The proxy bridged in when the network is off.
    proxy: Option<ProxyBridge>,
}

impl Plan {
    /// The deny-read paths no writable root holds: those a per-command Landlock layer can
    /// hide without taking from the command the new entries of a directory it may write.
    fn hidden_outside_writable_roots(&self) -> Vec<PathBuf> {
        self.file_system
            .deny_read
            .iter()
            .filter(|path| !self.writable.iter().any(|root| path.starts_with(root)))
            .cloned()
            .collect()
    }

    fn from_spec(spec: &HelperSpec) -> Result<Self, Failure> {
        crate::profile::validate(&spec.profile).map_err(|e| Failure::Setup(e.to_string()))?;
        let PermissionProfile::Managed {
            file_system,
            network,
        } = &spec.profile
        else {
            return Err(Failure::Setup(
                "the helper only runs managed profiles; unconfined commands use the `none` \
                 backend"
                    .into(),
            ));
        };
        let writable: Vec<PathBuf> = match file_system.kind {
            FileSystemSandboxKind::Restricted => file_system
                .writable_roots
                .iter()
                .map(|w| w.root.clone())
                .collect(),
            FileSystemSandboxKind::Unrestricted | FileSystemSandboxKind::External => {
                vec![PathBuf::from("/")]
            }
        };
        Ok(Self {
            file_system: file_system.clone(),
            writable,
            network_on: *network == NetworkPolicy::Enabled,
            proxy: spec
                .network_proxy
                .clone()
                .filter(|_| *network != NetworkPolicy::Enabled),
        })
    }

    /// The read-only subpaths (`.git`, `.troupe`, …) that lie inside a writable root: only
    /// there could a command create or change them.
    fn protected_subpaths(&self) -> Vec<PathBuf> {
        let roots = &self.file_system.writable_roots;
        roots
            .iter()
            .flat_map(|w| w.read_only_subpaths.iter().cloned())
            .filter(|p| roots.iter().any(|w| p.starts_with(&w.root)))
            .collect()
    }

    fn writes_anywhere(&self) -> bool {
        self.writable.iter().any(|w| w == Path::new("/"))
    }

    /// New namespaces (this process continues as PID 1 of the new PID namespace) and the
    /// mount view of the policy. With the network off, the host's Unix sockets are masked;
    /// their table (from the host network namespace) is returned for later re-checks.
    fn enter_linux_view(&self) -> Result<Option<sockets::HostSockets>, Failure> {
        // On the host, before the namespaces: missing `.git`/`.troupe` get placeholders to
        // mount on, removed by a cleaner process once the sandbox has ended.
        let placeholders = if self.writes_anywhere() {
            Vec::new()
        } else {
            protected::create_placeholders(&self.protected_subpaths())?
        };
        protected::spawn_cleaner(placeholders)?;
        let mut host_sockets = if self.network_on {
            None
        } else {
            // The proxy's socket stays reachable: the bridge connects to it from inside.
            let mut allowed = self.file_system.allow_unix_sockets.clone();
            allowed.extend(self.proxy.as_ref().map(|p| p.socket.clone()));
            Some(sockets::HostSockets::open(&allowed)?)
        };
        enter_namespaces(self.network_on, self.proxy.as_ref())?;
        // Opened inside the new mount namespace: a bind source must belong to it.
        let devices = mounts::HostDevices::open();
        let roots = if self.writes_anywhere() {
            vec![troupe_messages::policy::WritableRoot {
                root: PathBuf::from("/"),
                read_only_subpaths: Vec::new(),
            }]
        } else {
            self.file_system.writable_roots.clone()
        };
        mounts::build(&roots, &self.file_system.deny_read, &devices)?;
        if let Some(host_sockets) = host_sockets.as_mut() {
            sockets::mask(&host_sockets.sockets_to_mask()?)?;
        }
        Ok(host_sockets)
    }
}

fn parse_args(args: &[OsString]) -> Result<(HelperSpec, Vec<CString>), Failure> {
    let usage = || Failure::Setup(format!("usage: troupe {HELPER_ARG} SPEC_JSON -- CMD ARGS…"));
    let spec = args.first().ok_or_else(usage)?;
    let spec: HelperSpec = serde_json::from_slice(spec.as_bytes())
        .map_err(|e| Failure::Setup(format!("bad sandbox spec: {e}")))?;
    if args.get(1).map(|a| a.as_bytes()) != Some(b"--") || args.len() < 3 {
        return Err(usage());
    }
    let command = args[2..]
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| Failure::Setup("the command contains a NUL byte".into()))?;
    Ok((spec, command))
}

/// New user, mount, PID, IPC (and network) namespaces; then a fork, so the command is PID 1
/// of the new PID namespace. The parent only waits and relays the exit status.
fn enter_namespaces(network_on: bool, proxy: Option<&ProxyBridge>) -> Result<(), Failure> {
    let uid = nix::unistd::getuid();
    let gid = nix::unistd::getgid();
    let mut flags = CloneFlags::CLONE_NEWUSER
        | CloneFlags::CLONE_NEWNS
        | CloneFlags::CLONE_NEWPID
        | CloneFlags::CLONE_NEWIPC;
    if !network_on {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    nix::sched::unshare(flags).map_err(|e| {
        Failure::Setup(format!(
            "cannot create namespaces ({e}); the kernel or a container forbids user \
             namespaces: use `--backend landlock` / sandbox.backend = \"landlock\""
        ))
    })?;
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|e| Failure::Setup(format!("writing {file}: {e}")))
    };
    write("/proc/self/setgroups", "deny".into())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    // Listening before the fork: the command can connect from its first instruction.
    let bridge = match proxy {
        Some(proxy) if !network_on => Some((bridge::listen(proxy.port)?, proxy.socket.clone())),
        _ => None,
    };
    // SAFETY: the helper is single-threaded (it runs before any runtime starts), so the child
    // may do anything the parent could.
    match unsafe { fork() }.map_err(|e| Failure::Setup(format!("fork: {e}")))? {
        ForkResult::Child => {
            // The listener belongs to the parent's relay threads.
            drop(bridge);
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                .map_err(|e| Failure::Setup(format!("pdeathsig: {e}")))?;
            Ok(())
        }
        ForkResult::Parent { child } => match bridge {
            // Not dumpable: the command cannot open this unconfined process's memory.
            Some((listener, socket)) => {
                let _ = nix::sys::prctl::set_dumpable(false);
                Err(match bridge::relay_until_exit(listener, &socket, child) {
                    Ok(code) => Failure::Exit(code),
                    Err(message) => Failure::Setup(message),
                })
            }
            None => Err(relay_exit(child)),
        },
    }
}

/// Waits for `child` and turns its end into this process's exit.
fn relay_exit(child: nix::unistd::Pid) -> Failure {
    loop {
        match waitpid(child, None) {
            Ok(WaitStatus::Exited(_, code)) => return Failure::Exit(code),
            Ok(WaitStatus::Signaled(_, signal, _)) => return Failure::Exit(128 + signal as i32),
            Ok(_) | Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Failure::Setup(format!("waiting for the sandbox: {e}")),
        }
    }
}

/// Everything applied to the command's process just before exec, built ahead: the zygote
/// builds it once and every child applies its own copy.
pub(crate) struct Confinement {
    filters: Vec<seccompiler::BpfProgram>,
    landlock: Result<landlock::RulesetCreated, String>,
    landlock_required: bool,
    /// Deny-read paths a per-command Landlock layer hides (namespace backends).
    hidden_at_exec: Vec<PathBuf>,
}

impl Confinement {
    fn prepare(
        writable: &[PathBuf],
        protected: &[PathBuf],
        hidden: &[PathBuf],
        network_on: bool,
        proxy_port: Option<u16>,
        landlock_required: bool,
        unix_sockets: &[PathBuf],
    ) -> Result<Self, Failure> {
        let inet = if network_on {
            seccomp::Inet::Open
        } else if proxy_port.is_some() {
            seccomp::Inet::LoopbackOnly
        } else if landlock_required && unix_sockets.is_empty() {
            seccomp::Inet::Sealed
        } else {
            seccomp::Inet::Closed
        };
        let filters = seccomp::build(inet, landlock_required)?;
        let landlock = landlock_layer::prepare(writable, protected, hidden, network_on, proxy_port);
        if let (Err(err), true) = (&landlock, landlock_required) {
            return Err(Failure::Setup(err.clone()));
        }
        Ok(Self {
            filters,
            landlock,
            landlock_required,
            hidden_at_exec: Vec::new(),
        })
    }

    /// Adds the per-command layer hiding `paths` (see `landlock_layer::hide_until_exit`).
    pub(crate) fn hiding(mut self, paths: Vec<PathBuf>) -> Self {
        self.hidden_at_exec = paths;
        self
    }

    /// Enters `cwd`, applies every layer and execs `command`; returns only on failure.
    fn exec(self, cwd: &Path, command: &[CString]) -> Result<Never, Failure> {
        std::env::set_current_dir(cwd)
            .map_err(|e| Failure::Setup(format!("cannot enter {}: {e}", cwd.display())))?;
        privileges::set_no_new_privs()?;
        if let Err(err) = landlock_layer::hide_until_exit(&self.hidden_at_exec) {
            // The mount view still masks them; only a host rename-over while this command
            // runs would show through.
            eprintln!("troupe sandbox: deny-read layer not applied: {err}");
        }
        let enforcement = self.landlock.and_then(landlock_layer::enforce);
        match (enforcement, self.landlock_required) {
            (Ok(landlock_layer::Enforcement::None), true) => {
                return Err(Failure::Setup(
                    "this kernel does not enforce Landlock, so the landlock backend cannot \
                     confine the command; use the linux backend or a kernel with Landlock (5.13+)"
                        .into(),
                ))
            }
            (Err(err), true) => return Err(Failure::Setup(err)),
            // Second layer under namespaces: best effort.
            _ => {}
        }
        privileges::drop_all_capabilities()?;
        privileges::close_inherited_fds()?;
        seccomp::install(&self.filters)?;
        let program = &command[0];
        let err = nix::unistd::execvp(program, command).err();
        eprintln!(
            "troupe sandbox: cannot run `{}`: {}",
            program.to_string_lossy(),
            err.map(nix::errno::Errno::desc).unwrap_or("unknown error")
        );
        Err(Failure::Exit(127))
    }
}
