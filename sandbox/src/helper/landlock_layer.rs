//! The Landlock layer: read and execute everywhere, write only under the writable roots and a
//! few device nodes; with the network off, no TCP bind/connect (ABI 4+); no signals to, and no
//! abstract-socket connections with, processes outside the sandbox (ABI 6+). Best effort: an
//! older kernel enforces what it knows.

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
use std::path::PathBuf;

/// Devices every command may write (output sinks and the terminal).
const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

/// How much of the ruleset the kernel enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    Full,
    Partial,
    None,
}

/// The ruleset for `writable` (empty = read-only), built but not yet applied: the zygote
/// builds it once and every child applies its own copy.
pub fn prepare(writable: &[PathBuf], network: bool) -> Result<RulesetCreated, String> {
    let abi = ABI::V6;
    let fail = |what: &str, err: &dyn std::fmt::Display| format!("landlock {what}: {err}");
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(|e| fail("filesystem rights", &e))?
        .scope(Scope::Signal | Scope::AbstractUnixSocket)
        .map_err(|e| fail("scopes", &e))?;
    if !network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(|e| fail("network rights", &e))?;
    }
    let mut created = ruleset.create().map_err(|e| fail("ruleset", &e))?;
    created = created
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))
        .map_err(|e| fail("read rule", &e))?;
    let devices: Vec<&str> = WRITABLE_DEVICES
        .iter()
        .copied()
        .filter(|d| std::path::Path::new(d).exists())
        .collect();
    created = created
        .add_rules(path_beneath_rules(devices, AccessFs::from_all(abi)))
        .map_err(|e| fail("device rule", &e))?;
    created = created
        .add_rules(path_beneath_rules(writable, AccessFs::from_all(abi)))
        .map_err(|e| fail("writable-root rule", &e))?;
    Ok(created)
}

/// Applies a prepared ruleset to this thread (and what it execs).
pub fn enforce(created: RulesetCreated) -> Result<Enforcement, String> {
    let status = created
        .restrict_self()
        .map_err(|e| format!("landlock restrict_self: {e}"))?;
    Ok(match status.ruleset {
        RulesetStatus::FullyEnforced => Enforcement::Full,
        RulesetStatus::PartiallyEnforced => Enforcement::Partial,
        RulesetStatus::NotEnforced => Enforcement::None,
    })
}
