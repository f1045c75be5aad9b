//! `troupe login --with-api-key` / `troupe logout`: keys in `$TROUPE_HOME/auth.json` (0600),
//! stored under the default provider's `env_key`. The environment variable still wins.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::io::Read;
use std::path::Path;
use troupe_actors::sampler::auth::{remove_keys, store_key, AUTH_FILE};
use troupe_config::resolve::{load_config, CliOverrides};

#[derive(Debug, Args)]
pub struct LoginArgs {
    /// Read the API key from stdin (`printenv OPENAI_API_KEY | troupe login --with-api-key`).
    #[arg(long = "with-api-key")]
    with_api_key: bool,
    /// Store the key of this provider instead of the configured one.
    #[arg(long = "provider", value_name = "ID")]
    provider: Option<String>,
    /// Override a config value: `-c key=value`.
    #[arg(short = 'c', long = "config", value_name = "key=value")]
    config: Vec<String>,
}

pub fn login(home: &Path, args: LoginArgs) -> Result<()> {
    if !args.with_api_key {
        bail!(
            "only API keys are supported: pipe the key on stdin to `troupe login --with-api-key`"
        );
    }
    let mut raw = args.config;
    if let Some(id) = &args.provider {
        raw.push(format!("model_provider={}", toml_string(id)));
    }
    let loaded = load_config(
        home,
        &CliOverrides {
            raw,
            ..CliOverrides::default()
        },
    )?;
    let provider = &loaded.settings.provider;
    let Some(env_key) = &provider.env_key else {
        bail!(
            "model provider `{}` takes no API key (it has no env_key)",
            provider.id
        );
    };
    let mut input = String::new();
    std::io::stdin()
        .take(64 * 1024)
        .read_to_string(&mut input)
        .context("cannot read the API key from stdin")?;
    let key = input.trim();
    if key.is_empty() {
        bail!("no API key on stdin: pipe it in, e.g. `printenv {env_key} | troupe login --with-api-key`");
    }
    if key.chars().any(char::is_whitespace) {
        bail!("the API key on stdin holds whitespace inside it; pipe exactly one key");
    }
    let path = home.join(AUTH_FILE);
    store_key(&path, env_key, key)?;
    println!(
        "Stored the API key of provider `{}` ({env_key}) in {}; the environment variable {env_key}, when set, still wins.",
        provider.id,
        path.display()
    );
    Ok(())
}

pub fn logout(home: &Path) -> Result<()> {
    let path = home.join(AUTH_FILE);
    if remove_keys(&path)? {
        println!("Removed the stored API keys ({}).", path.display());
    } else {
        println!("No stored API keys ({} does not exist).", path.display());
    }
    Ok(())
}

/// `value` as a TOML string literal, for a `-c` override.
pub fn toml_string(value: &str) -> String {
    let mut out = String::from("\"");
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
