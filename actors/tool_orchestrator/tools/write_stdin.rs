//! `write_stdin`: types into a running `exec_command` session and returns what it printed
//! within `yield_time_ms`; the session's exit is reported once, by whichever call sees it.

use super::exec_output as output;
use crate::tool_orchestrator::contract::parse_args as parse;
use crate::tool_orchestrator::contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use crate::tool_orchestrator::unified_exec::{
    offered, yield_time, SessionKey, DEFAULT_MAX_OUTPUT_TOKENS,
};
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;
use std::time::Instant;
use troupe_messages::settings::SessionSettings;
use troupe_messages::tools::ToolSpec;

const DEFAULT_WRITE_YIELD_MS: u64 = 250;

/// Arguments of `write_stdin`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteStdinArgs {
    pub session_id: u32,
    #[serde(default)]
    pub chars: String,
    #[serde(default)]
    pub yield_time_ms: Option<u64>,
    #[serde(default)]
    pub max_output_tokens: Option<usize>,
}

/// Handler of `write_stdin`.
pub struct WriteStdinHandler;

impl ToolHandler for WriteStdinHandler {
    fn spec(&self) -> ToolSpec {
        ToolSpec::Function {
            name: "write_stdin".into(),
            description: "Writes characters to a running exec_command session (\"\\n\" is Enter, \
                          \"\\u0003\" is Ctrl-C; empty chars just polls) and returns the output \
                          printed within yield_time_ms."
                .into(),
            strict: false,
            parameters: json!({
                "type": "object",
                "properties": {
                    "session_id": {"type": "number"},
                    "chars": {"type": "string"},
                    "yield_time_ms": {"type": "number",
                        "description": "How long to wait for output (default 250)."},
                    "max_output_tokens": {"type": "number"}
                },
                "required": ["session_id"],
                "additionalProperties": false
            }),
        }
    }

    fn spec_for(&self, settings: &SessionSettings) -> Option<ToolSpec> {
        offered(settings).then(|| self.spec())
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Shared
    }

    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(write_stdin(ctx))
    }
}

async fn write_stdin(ctx: ToolContext) -> ToolOutcome {
    let args: WriteStdinArgs = match parse("write_stdin", &ctx.call.payload) {
        Ok(args) => args,
        Err(message) => return ToolOutcome::error(message),
    };
    let Some(session) = ctx.services.exec.get(args.session_id) else {
        return ToolOutcome::error(format!(
            "write_stdin failed: there is no running session {}; it exited (its exit was \
             reported already) or was never started",
            args.session_id
        ));
    };
    let started = Instant::now();
    if !args.chars.is_empty() {
        if let Err(message) = session.write(&args.chars) {
            return ToolOutcome::error(message);
        }
    }
    let collected = session
        .collect(yield_time(args.yield_time_ms, DEFAULT_WRITE_YIELD_MS))
        .await;
    let max_tokens = args.max_output_tokens.unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS);
    match collected.exit_code {
        Some(code) => {
            ctx.services
                .exec
                .report_exit(SessionKey::Live(args.session_id), code);
            output::outcome(started, &collected, None, max_tokens)
        }
        None => output::outcome(started, &collected, Some(args.session_id), max_tokens),
    }
}
