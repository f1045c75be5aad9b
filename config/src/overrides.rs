//! `-c key=value` overrides: the value is TOML, or a plain string when it does not parse.

use crate::error::ConfigError;
use toml::{Table, Value};

/// One parsed override: a dotted key path and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    pub path: Vec<String>,
    pub value: Value,
}

/// Parses `key.path=value` the way Codex does.
pub fn parse_override(raw: &str) -> Result<Override, ConfigError> {
    let invalid = |reason: &str| ConfigError::InvalidOverride {
        raw: raw.to_string(),
        reason: reason.to_string(),
    };
    let (key, value) = raw
        .split_once('=')
        .ok_or_else(|| invalid("expected key=value"))?;
    let key = key.trim();
    if key.is_empty() {
        return Err(invalid("the key is empty"));
    }
    let path: Vec<String> = key.split('.').map(|part| part.trim().to_string()).collect();
    if path.iter().any(String::is_empty) {
        return Err(invalid("the key has an empty segment"));
    }
    let value = parse_value(value.trim());
    Ok(Override { path, value })
}

fn parse_value(text: &str) -> Value {
    let wrapped = format!("v = {text}");
    match toml::from_str::<Table>(&wrapped) {
        Ok(mut table) => table
            .remove("v")
            .unwrap_or_else(|| Value::String(text.to_string())),
        Err(_) => Value::String(text.trim_matches(|c| c == '"' || c == '\'').to_string()),
    }
}

/// Sets the override's value in `root`, creating tables on the way.
pub fn apply_override(root: &mut Table, ov: &Override) -> Result<(), ConfigError> {
    let dotted = ov.path.join(".");
    let (last, parents) = ov.path.split_last().ok_or(ConfigError::InvalidOverride {
        raw: dotted.clone(),
        reason: "the key is empty".into(),
    })?;
    let mut table = root;
    for (depth, part) in parents.iter().enumerate() {
        let entry = table
            .entry(part.clone())
            .or_insert_with(|| Value::Table(Table::new()));
        table = entry
            .as_table_mut()
            .ok_or_else(|| ConfigError::InvalidOverride {
                raw: dotted.clone(),
                reason: format!("`{}` is not a table", ov.path[..=depth].join(".")),
            })?;
    }
    table.insert(last.clone(), ov.value.clone());
    Ok(())
}
