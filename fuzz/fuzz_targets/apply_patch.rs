//! The patch parser and the matcher: the input is `FILE \0 PATCH` (or a patch alone); every
//! update hunk of the parsed patch is applied to FILE's text in memory. Nothing may panic,
//! however the patch or the file look.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;
use troupe_apply_patch::parser::{parse_patch, Hunk};
use troupe_apply_patch::plan::apply_chunks;

fuzz_target!(|data: &[u8]| {
    let (file, patch) = match data.iter().position(|b| *b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (&b""[..], data),
    };
    let Ok(patch) = std::str::from_utf8(patch) else {
        return;
    };
    let file = String::from_utf8_lossy(file);
    let Ok(hunks) = parse_patch(patch) else {
        return;
    };
    for hunk in &hunks {
        if let Hunk::Update { chunks, .. } = hunk {
            let _ = apply_chunks(&file, chunks, Path::new("f"));
        }
        let _ = troupe_apply_patch::lexical::resolve(Path::new("/w"), hunk.path());
    }
});
