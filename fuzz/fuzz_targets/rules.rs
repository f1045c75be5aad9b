//! The Starlark rules loader: any text as a `.rules` file either loads (and its rules are
//! evaluated on a few commands) or is an error; the loader's own limits keep a hostile file
//! from running away.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(rules) = troupe_rules::parse_rules("fuzz.rules", text) {
        for argv in [&["git", "status"][..], &["rm", "-rf", "/"], &[""]] {
            let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
            let _ = rules.evaluate(&argv);
        }
    }
});
