//! The config loader: the input is `CONFIG_TOML \0 OVERRIDE \n OVERRIDE …`; the TOML goes to
//! `$TROUPE_HOME/config.toml` and each line is a `-c key=value`. Whatever it says, loading
//! ends in settings or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use troupe_config::resolve::{load_config_in, CliOverrides};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (toml_text, overrides) = text.split_once('\0').unwrap_or((text, ""));
    for raw in overrides.lines() {
        if let Ok(ov) = troupe_config::overrides::parse_override(raw) {
            let mut table = toml::Table::new();
            let _ = troupe_config::overrides::apply_override(&mut table, &ov);
        }
    }
    let Ok(home) = tempfile::tempdir() else {
        return;
    };
    let system = home.path().join("system");
    if std::fs::write(home.path().join("config.toml"), toml_text).is_err() {
        return;
    }
    let cli = CliOverrides {
        raw: overrides.lines().map(String::from).collect(),
        cwd: Some(home.path().to_path_buf()),
        ..CliOverrides::default()
    };
    let _ = load_config_in(home.path(), &system, &cli);
});
