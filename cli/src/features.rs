//! `troupe features list`: every feature flag, its stage and whether it is on under the
//! current config (`[features]`, `-c`, `--enable/--disable`).

use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use std::path::Path;
use troupe_config::features::{find, known_names, FEATURES};
use troupe_config::resolve::{load_config, CliOverrides};

#[derive(Debug, Subcommand)]
pub enum FeaturesCommand {
    /// List the feature flags with their stage and state.
    List(ListArgs),
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Override a config value: `-c key=value`.
    #[arg(short = 'c', long = "config", value_name = "key=value")]
    config: Vec<String>,
    /// Enable a feature (repeatable); as `-c features.<name>=true`.
    #[arg(long = "enable", value_name = "FEATURE")]
    enable: Vec<String>,
    /// Disable a feature (repeatable); as `-c features.<name>=false`.
    #[arg(long = "disable", value_name = "FEATURE")]
    disable: Vec<String>,
}

/// `--enable`/`--disable` as `-c features.<name>=…` overrides; an unknown name is an error.
pub fn feature_overrides(enable: &[String], disable: &[String]) -> Result<Vec<String>> {
    let mut raw = Vec::new();
    for (names, on, flag) in [(enable, true, "--enable"), (disable, false, "--disable")] {
        for name in names {
            if find(name).is_none() {
                bail!(
                    "{flag} {name}: unknown feature; known features: {}",
                    known_names()
                );
            }
            raw.push(format!("features.{name}={on}"));
        }
    }
    Ok(raw)
}

pub fn run(home: &Path, command: FeaturesCommand) -> Result<()> {
    let FeaturesCommand::List(args) = command;
    let mut raw = args.config;
    raw.extend(feature_overrides(&args.enable, &args.disable)?);
    let loaded = load_config(
        home,
        &CliOverrides {
            raw,
            ..CliOverrides::default()
        },
    )?;
    for warning in &loaded.warnings {
        crate::output::warn(warning);
    }
    let width = FEATURES.iter().map(|f| f.name.len()).max().unwrap_or(0);
    for feature in FEATURES {
        crate::output::line(format!(
            "{:width$}  {:12}  {:5}  {}",
            feature.name,
            feature.stage.as_str(),
            feature.enabled(&loaded.settings),
            feature.description,
        ))?;
    }
    Ok(())
}
