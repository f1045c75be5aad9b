//! Why an actor did not start, said once. ractor wraps whatever `pre_start` returned in
//! `SpawnErr::StartupFailed`, whose text is "Actor panicked during startup '…'" whether or
//! not anything panicked, and a child's failure that its parent's `pre_start` passes on with
//! `?` is wrapped twice. The cause is the innermost error.

use ractor::SpawnErr;

/// The innermost cause of `err`, without ractor's wording.
pub fn cause(err: &SpawnErr) -> String {
    match err {
        SpawnErr::StartupFailed(inner) => match inner.downcast_ref::<SpawnErr>() {
            Some(nested) => cause(nested),
            None => inner.to_string(),
        },
        SpawnErr::ActorAlreadyStarted | SpawnErr::ActorAlreadyRegistered(_) => err.to_string(),
    }
}

#[cfg(test)]
#[path = "spawn_failure_tests.rs"]
mod tests;
