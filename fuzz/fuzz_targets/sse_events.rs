//! The model stream: raw bytes framed into server-sent events (as the sampler frames them),
//! each event decoded by every wire (Responses, Chat Completions, Anthropic), then the end
//! of the stream. A hostile or broken provider must never make the decoders panic.
#![no_main]

use futures::StreamExt;
use libfuzzer_sys::fuzz_target;
use troupe_actors::sampler::wire::wire_for;
use troupe_messages::sampling::ModelRequest;
use troupe_messages::settings::WireApi;

fuzz_target!(|data: &[u8]| {
    // Split in two chunks at the first byte's value, so framing across chunks is exercised.
    let cut = data.first().map_or(0, |b| usize::from(*b)).min(data.len());
    let chunks: Vec<Result<bytes::Bytes, std::io::Error>> = vec![
        Ok(bytes::Bytes::copy_from_slice(&data[..cut])),
        Ok(bytes::Bytes::copy_from_slice(&data[cut..])),
    ];
    use eventsource_stream::Eventsource;
    let events: Vec<_> = futures::executor::block_on(
        futures::stream::iter(chunks).eventsource().collect::<Vec<_>>(),
    );
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
    for api in [WireApi::Responses, WireApi::Chat, WireApi::Anthropic] {
        let mut decoder = wire_for(api).decoder(&request);
        for event in events.iter().flatten() {
            let _ = decoder.event(&event.event, &event.data);
        }
        let _ = decoder.end();
    }
});
