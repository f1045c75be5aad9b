//! `troupe acp`'s JSON-RPC framing: any line from an editor is a request, a notification, a
//! response or an error to answer with, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        let _ = troupe_acp::rpc::parse_line(line);
    }
});
