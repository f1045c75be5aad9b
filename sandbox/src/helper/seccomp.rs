//! The seccomp layer: syscalls a sandboxed command never needs and that would let it leave
//! or weaken the sandbox answer EPERM; with the network off, sockets other than AF_UNIX too
//! (and AF_UNIX as well where no mount view masks the host's sockets);
//! and no command may push input into a terminal (`TIOCSTI`, `TIOCLINUX`).

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use std::collections::BTreeMap;

/// Namespace-creating clone flags; any of them set → refused.
const NAMESPACE_FLAGS: [u64; 7] = [
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWCGROUP as u64,
];

/// Always refused: escaping (mount, namespaces, chroot), reaching other processes (ptrace,
/// process_vm_*), kernel attack surface (io_uring, bpf, perf, keyrings, modules, kexec).
const DENIED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_chroot,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_fsconfig,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_syslog,
    libc::SYS_acct,
    libc::SYS_userfaultfd,
];

fn arch() -> Result<TargetArch, String> {
    std::env::consts::ARCH
        .try_into()
        .map_err(|err| format!("seccomp does not support this CPU architecture: {err:?}"))
}

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, String> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Qword, op, value).map_err(|e| e.to_string())
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, String> {
    SeccompRule::new(conditions).map_err(|e| e.to_string())
}

/// `ioctl(fd, TIOCSTI | TIOCLINUX, …)`: pushing input into a terminal (or, on a console,
/// selection pastes). The request is compared on its low 32 bits only, as the kernel reads
/// it (`unsigned int`), so high bits set in the register cannot slip past.
// The ioctl request type differs between targets (c_ulong here, c_int elsewhere).
#[allow(clippy::unnecessary_cast)]
fn terminal_injection_rules() -> Result<Vec<SeccompRule>, String> {
    [libc::TIOCSTI, libc::TIOCLINUX]
        .into_iter()
        .map(|request| {
            let request =
                SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request)
                    .map_err(|e| e.to_string())?;
            rule(vec![request])
        })
        .collect()
}

/// Builds the two filters: EPERM for the deny list, ENOSYS for `clone3` (its flags live in
/// memory seccomp cannot read, so libc must fall back to `clone`, whose flags we can check).
///
/// `keep_session` (the `landlock` backend, which has no PID namespace): `setsid` is refused,
/// so nothing the command starts can leave the session the runtime kills it by.
/// Which sockets beside AF_UNIX a command may open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inet {
    /// Any (the network is on).
    Open,
    /// AF_INET/AF_INET6 only: the network namespace holds nothing but loopback, where the
    /// network proxy's bridge listens. Netlink, packet and every other family stay refused.
    LoopbackOnly,
    /// None (the network is off).
    Closed,
    /// None, AF_UNIX included: the network is off and no mount view hides the host's
    /// pathname sockets (the landlock backend; Landlock has no right over `connect` to one),
    /// so a command could otherwise reach any service listening on one (docker's, a
    /// database's). `socketpair` stays allowed: it reaches nothing outside.
    Sealed,
}

pub fn build(inet: Inet, keep_session: bool) -> Result<Vec<BpfProgram>, String> {
    let arch = arch()?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in DENIED {
        rules.insert(*nr, vec![]);
    }
    let clone_rules = NAMESPACE_FLAGS
        .iter()
        .map(|flag| rule(vec![cond(0, SeccompCmpOp::MaskedEq(*flag), *flag)?]))
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, clone_rules);
    rules.insert(libc::SYS_ioctl, terminal_injection_rules()?);
    // prlimit64(pid, resource, new, old) on another process with a new limit: the command
    // could otherwise lower troupe's own limits (no PID namespace hides it under landlock).
    rules.insert(
        libc::SYS_prlimit64,
        vec![rule(vec![
            cond(0, SeccompCmpOp::Ne, 0)?,
            cond(2, SeccompCmpOp::Ne, 0)?,
        ])?],
    );
    if keep_session {
        rules.insert(libc::SYS_setsid, vec![]);
    }
    match inet {
        Inet::Open => {}
        Inet::Closed => {
            let not_unix = cond(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?;
            rules.insert(libc::SYS_socket, vec![rule(vec![not_unix])?]);
        }
        Inet::Sealed => {
            rules.insert(libc::SYS_socket, vec![]);
        }
        Inet::LoopbackOnly => {
            // Refused when the family is none of the three (one rule, conditions and-ed).
            let family_is_not = |af: i32| cond(0, SeccompCmpOp::Ne, af as u64);
            rules.insert(
                libc::SYS_socket,
                vec![rule(vec![
                    family_is_not(libc::AF_UNIX)?,
                    family_is_not(libc::AF_INET)?,
                    family_is_not(libc::AF_INET6)?,
                ])?],
            );
        }
    }
    let eperm = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let mut clone3 = BTreeMap::new();
    clone3.insert(libc::SYS_clone3, vec![]);
    let enosys = SeccompFilter::new(
        clone3,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let mut programs = Vec::new();
    for filter in [eperm, enosys] {
        programs.push(BpfProgram::try_from(filter).map_err(|e| e.to_string())?);
    }
    Ok(programs)
}

/// Installs the filters on this thread (inherited by the exec'd command). Needs
/// `no_new_privs` (or CAP_SYS_ADMIN) first.
pub fn install(programs: &[BpfProgram]) -> Result<(), String> {
    for program in programs {
        seccompiler::apply_filter(program).map_err(|e| format!("installing seccomp: {e}"))?;
    }
    Ok(())
}
