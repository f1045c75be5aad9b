//! What `troupe mcp-server` reads from its client: every line through the transport's
//! JSON-RPC and handshake filter (which must answer or drop anything rmcp cannot take, never
//! panic), then the `codex` / `codex-reply` tool arguments of each line that carries them,
//! parsed and turned into config overrides as a call would.
#![no_main]

use libfuzzer_sys::fuzz_target;
use troupe_mcp_server::params::{parse, ReplyParams, StartParams};
use troupe_mcp_server::transport::LineFilter;

fuzz_target!(|data: &[u8]| {
    let mut filter = LineFilter::default();
    for line in data.split(|b| *b == b'\n') {
        let _ = filter.check(line);
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) else {
            continue;
        };
        let arguments = value
            .pointer("/params/arguments")
            .and_then(|a| a.as_object())
            .cloned();
        if let Ok(start) = parse::<StartParams>("codex", arguments.clone()) {
            let _ = start.config_overrides();
        }
        if let Ok(reply) = parse::<ReplyParams>("codex-reply", arguments) {
            let _ = reply.thread();
        }
    }
});
