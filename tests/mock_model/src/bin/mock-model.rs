//! `mock-model`: the auto-mode mock as a standalone process, for benchmarks
//! that point real agent CLIs (Troupe, Codex CLI, ...) at a fake model.
//!
//! Prints exactly one line `listening http://127.0.0.1:PORT/v1` once ready,
//! then serves until killed.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a standalone process: its address and failures go to its own stdout and stderr"
)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use troupe_mock_model::{AutoConfig, Behaviour, MockModel, MockOptions};

#[derive(Debug, Parser)]
#[command(
    name = "mock-model",
    about = "Stateless mock of the OpenAI Responses API"
)]
struct Args {
    /// Port on 127.0.0.1 (0 = pick a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Tool calls per conversation before the final answer.
    #[arg(long, default_value_t = 1)]
    tool_calls: usize,
    /// Shell command each tool call runs.
    #[arg(long, default_value = "true")]
    command: String,
    /// Final answer text.
    #[arg(long, default_value = "done")]
    answer: String,
    /// Tool calls per response.
    #[arg(long, default_value_t = 1)]
    parallel: usize,
    /// Generate a final answer of this many bytes instead of --answer.
    #[arg(long, default_value_t = 0)]
    answer_bytes: usize,
    /// Number of text deltas for a generated answer.
    #[arg(long, default_value_t = 1)]
    answer_deltas: usize,
    /// Append one line per request: "<n> <unix_ms> <method> <path> tool_outputs=<k>
    /// input_items=<m> recv_ns=<t> first_byte_ns=<t> last_byte_ns=<t> body_bytes=<b>"
    /// (times in Unix-epoch nanoseconds; see the crate's `log` module).
    #[arg(long)]
    log: Option<PathBuf>,
    /// Play a multi-agent scenario instead: a root that spawns this many sub-agents in one
    /// response and waits for all of them; each sub-agent runs --command once and answers
    /// (Troupe's and Codex's collaboration tools alike; see the crate's `multi_agent`).
    #[arg(long, default_value_t = 0)]
    agents: usize,
    /// Server worker threads.
    #[arg(long, default_value_t = 2)]
    workers: usize,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let config = AutoConfig {
        tool_calls: args.tool_calls,
        command: args.command,
        answer: args.answer,
        parallel: args.parallel,
        answer_bytes: args.answer_bytes,
        answer_deltas: args.answer_deltas,
    };
    let behaviour = if args.agents > 0 {
        Behaviour::MultiAgent {
            config,
            agents: args.agents,
        }
    } else {
        Behaviour::Auto(config)
    };
    let options = MockOptions {
        behaviour,
        port: args.port,
        record: false,
        log_file: args.log,
        worker_threads: args.workers,
        websockets: true,
    };
    let mock = match MockModel::start_blocking(options) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("mock-model: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout().lock();
    if writeln!(out, "listening {}", mock.base_url())
        .and_then(|()| out.flush())
        .is_err()
    {
        eprintln!("mock-model: cannot write to stdout");
        return ExitCode::FAILURE;
    }
    drop(out);
    loop {
        std::thread::park();
    }
}
