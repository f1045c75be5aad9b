//! The rollout loader: any bytes as a rollout file are parsed (torn, unknown and damaged
//! lines sorted out) and what loads is replayed into a history, as a resume does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;
use troupe_actors::rollout_recorder::{loader, replay};

fuzz_target!(|data: &[u8]| {
    if let Ok(rollout) = loader::parse(Path::new("rollout.jsonl"), data) {
        let _ = loader::check_writable(&rollout);
        let _ = replay::replay(&rollout.lines);
    }
});
