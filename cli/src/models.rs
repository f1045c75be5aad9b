//! `troupe models [--provider ID]`: the models a provider lists (`GET {base_url}/models`), and
//! the `--oss` check that a local server answers before a thread starts.

use crate::login::toml_string;
use anyhow::{bail, Result};
use clap::Args;
use std::path::Path;
use std::time::Duration;
use troupe_actors::sampler::auth::AUTH_FILE;
use troupe_actors::sampler::models::{list_models, ModelsError};
use troupe_config::resolve::{load_config, CliOverrides};
use troupe_messages::settings::ProviderSettings;

/// How long `troupe models` and the `--oss` check wait for an answer.
const MODELS_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// List the models of this provider instead of the configured one.
    #[arg(long = "provider", value_name = "ID")]
    provider: Option<String>,
    /// Override a config value: `-c key=value`.
    #[arg(short = 'c', long = "config", value_name = "key=value")]
    config: Vec<String>,
}

pub async fn run(home: &Path, args: ModelsArgs) -> Result<()> {
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
    for warning in &loaded.warnings {
        eprintln!("warning: {warning}");
    }
    let provider = &loaded.settings.provider;
    let models = list_models(
        &reqwest::Client::new(),
        provider,
        &home.join(AUTH_FILE),
        MODELS_TIMEOUT,
    )
    .await?;
    for model in models {
        crate::output::line(model)?;
    }
    Ok(())
}

/// Before an `--oss` thread: the local server must answer, or the user is told how to start
/// one. A model it does not list is worth a warning (Ollama may still pull it).
pub async fn check_local_server(
    home: &Path,
    provider: &ProviderSettings,
    model: &str,
) -> Result<()> {
    let listed = list_models(
        &reqwest::Client::new(),
        provider,
        &home.join(AUTH_FILE),
        MODELS_TIMEOUT,
    )
    .await;
    match listed {
        Ok(models) => {
            if !models.is_empty() && !models.iter().any(|m| m == model) {
                eprintln!(
                    "warning: the local server does not list model `{model}`; it lists: {}",
                    models.join(", ")
                );
            }
            Ok(())
        }
        Err(err @ ModelsError::Unreachable { .. }) => bail!(
            "no local model server answers for provider `{}` at {}: {err}. Start one (e.g. \
             `ollama serve`), pick another with --local-provider ollama|lmstudio|vllm|llamacpp, \
             or set TROUPE_OSS_BASE_URL / TROUPE_OSS_PORT",
            provider.id,
            provider.base_url
        ),
        Err(err) => bail!(
            "the local model server of provider `{}` did not answer as expected: {err}",
            provider.id
        ),
    }
}
