//! A scheduling hint for the thread that writes to a client: it wakes for a moment per
//! batch of lines, so it asks the kernel for a short slice (EEVDF's custom slice of the
//! normal policy, Linux 6.12 and later; no privilege needed). With a short slice a thread
//! that wakes gets a core sooner when every core is busy (the commands a turn runs, the
//! model's stream), which is when a notification would otherwise wait milliseconds in the
//! queue. Priority and nice stay as they are: the thread does not outrank anything, it
//! only runs in smaller pieces. Kernels without custom slices refuse or ignore it, and then
//! nothing changes.

/// The slice asked for: the smallest the kernel takes.
const SHORT_SLICE_NS: u64 = 100_000;

/// `struct sched_attr` as the kernel reads it (the first version, 56 bytes).
#[repr(C)]
#[derive(Default)]
struct SchedAttr {
    size: u32,
    policy: u32,
    flags: u64,
    nice: i32,
    priority: u32,
    runtime: u64,
    deadline: u64,
    period: u64,
    util_min: u32,
    util_max: u32,
}

/// Asks for a short slice for the calling thread, keeping its policy and nice value;
/// whether the kernel took it.
pub fn request_short_slice() -> bool {
    let mut attr = SchedAttr::default();
    let size = std::mem::size_of::<SchedAttr>() as u32;
    // SAFETY: `attr` is a valid, writable `sched_attr` of `size` bytes; pid 0 is this thread.
    let read = unsafe { libc::syscall(libc::SYS_sched_getattr, 0, &mut attr, size, 0) };
    if read != 0 || attr.policy != libc::SCHED_OTHER as u32 {
        return false;
    }
    attr.size = size;
    attr.flags = 0;
    attr.runtime = SHORT_SLICE_NS;
    // SAFETY: as above; the kernel only reads `attr`.
    let set = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr, 0) };
    set == 0
}

/// The calling thread's slice as the kernel reports it (0: the default).
#[cfg(test)]
fn current_slice_ns() -> Option<u64> {
    let mut attr = SchedAttr::default();
    let size = std::mem::size_of::<SchedAttr>() as u32;
    // SAFETY: as in `request_short_slice`.
    let read = unsafe { libc::syscall(libc::SYS_sched_getattr, 0, &mut attr, size, 0) };
    (read == 0).then_some(attr.runtime)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_short_slice_is_taken_and_the_nice_value_kept() {
        std::thread::spawn(|| {
            // A niced thread (raising one's own nice value needs no privilege).
            // SAFETY: plain system calls on this thread (`who` 0).
            let niced = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 5) } == 0;
            let taken = super::request_short_slice();
            if taken {
                assert_eq!(super::current_slice_ns(), Some(super::SHORT_SLICE_NS));
            }
            if niced {
                // SAFETY: as above.
                assert_eq!(unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }, 5);
            }
        })
        .join()
        .map_err(|_| "the thread panicked")
        .unwrap_or_else(|err| panic!("{err}"));
    }
}
