//! The Chat Completions and Anthropic stream decoders fed event by event, past the SSE
//! framing: each input line is `EVENT<TAB>DATA` (or only `DATA`), so the fuzzer spends its
//! time in the decoders' state (tool-call fragments by index, content blocks opened and
//! closed out of order, usage arriving early or twice) rather than in the framing that
//! `sse_events` covers. The first byte picks the wire.
#![no_main]

use libfuzzer_sys::fuzz_target;
use troupe_actors::sampler::wire::wire_for;
use troupe_messages::sampling::ModelRequest;
use troupe_messages::settings::WireApi;

fuzz_target!(|data: &[u8]| {
    let Some((first, rest)) = data.split_first() else {
        return;
    };
    let api = match first % 3 {
        0 => WireApi::Chat,
        1 => WireApi::Anthropic,
        _ => WireApi::Responses,
    };
    let text = String::from_utf8_lossy(rest);
    let request = ModelRequest {
        model: "m".into(),
        instructions: String::new(),
        input: Vec::new(),
        tools: Vec::new(),
        parallel_tool_calls: true,
        prompt_cache_key: String::new(),
        reasoning_effort: None,
        verbosity: None,
        output_schema: None,
    };
    let mut decoder = wire_for(api).decoder(&request);
    for line in text.lines() {
        let (event, data) = line.split_once('\t').unwrap_or(("", line));
        // A decoder that refused an event is not fed further (the sampler ends the stream).
        if decoder.event(event, data).is_err() {
            return;
        }
    }
    let _ = decoder.end();
});
