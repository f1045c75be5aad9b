//! `troupe-sandbox`: the sandbox helper alone. `troupe` can act as the helper too (hidden
//! first argument), but this small binary starts several times faster than the full one
//! (a fraction of the code to map and relocate), and every confined command pays that
//! start-up once, so the backends prefer it when it sits next to `troupe`.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a frontend: its output and its errors are for the user's terminal"
)]

fn main() {
    troupe_sandbox::helper::run_if_helper();
    eprintln!(
        "troupe-sandbox is started by troupe to confine commands; run `troupe sandbox linux -- CMD` instead"
    );
    std::process::exit(2);
}
