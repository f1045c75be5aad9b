//! Running commands confined, without actors: the Linux sandbox helper (the process that
//! builds namespaces, mounts, Landlock and seccomp and then execs the command), the permission
//! profiles it enforces, the probe that says which backend this machine supports, the wire
//! format between the runtime and a zygote, and process spawning with bounded output capture
//! and process-group kills. The sandbox actors in `troupe-actors` drive this crate.
//!
//! Capabilities are dropped with the `caps` crate; `no_new_privs` and the securebits, which it
//! does not cover, are set with `prctl` directly (see `helper/privileges.rs`).

pub mod containment;
pub mod descendants;
pub mod grants;
pub mod head_tail;
pub mod helper;
pub mod host_git;
pub mod live_output;
mod locking;
pub mod missing;
pub mod netproxy;
pub mod probe;
pub mod process;
pub mod profile;
pub mod session_kill;
pub mod spawn_trampoline;
pub mod supervisor;
pub mod zygote_wire;

#[cfg(test)]
#[path = "head_tail_tests.rs"]
mod head_tail_tests;
#[cfg(test)]
#[path = "live_output_tests.rs"]
mod live_output_tests;
#[cfg(test)]
#[path = "process_tests.rs"]
mod process_tests;
#[cfg(test)]
#[path = "spawn_trampoline_tests.rs"]
mod spawn_trampoline_tests;
