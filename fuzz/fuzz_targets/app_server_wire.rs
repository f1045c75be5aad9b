//! The app-server's JSON-RPC framing: any line from a client is a request, a notification,
//! a response or a framing error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = troupe_app_server_protocol::jsonrpc::parse(data);
});
