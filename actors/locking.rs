//! Locking a std mutex whose holder may have panicked: every such mutex in the runtime guards
//! plain bookkeeping (sets, maps, buffers) that stays consistent, so the data is used as is
//! instead of spreading the panic.

use std::sync::{Mutex, MutexGuard};

/// Locks, recovering from a poisoned mutex.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
