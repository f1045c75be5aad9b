//! `--output-schema FILE`: a JSON Schema the final answer must follow. It is checked up
//! front (a file that is not a JSON Schema is an error before anything runs), sent to the
//! model as the response format, and the final message is validated against it: exec fails,
//! naming what does not conform, when it does not.

use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::path::Path;

/// Largest schema file read.
const MAX_SCHEMA_BYTES: u64 = 1024 * 1024;

/// Reads and checks the schema at `path`.
pub fn load(path: &Path) -> Result<Value> {
    let meta = std::fs::metadata(path)
        .with_context(|| format!("--output-schema {}: cannot read it", path.display()))?;
    if !meta.is_file() {
        bail!("--output-schema {}: not a file", path.display());
    }
    if meta.len() > MAX_SCHEMA_BYTES {
        bail!(
            "--output-schema {}: {} bytes; the limit is {MAX_SCHEMA_BYTES}",
            path.display(),
            meta.len()
        );
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--output-schema {}: cannot read it", path.display()))?;
    let schema: Value = serde_json::from_str(&text)
        .with_context(|| format!("--output-schema {}: not valid JSON", path.display()))?;
    check_schema(&schema)
        .map_err(|err| anyhow::anyhow!("--output-schema {}: {err}", path.display()))?;
    Ok(schema)
}

/// Whether `schema` is a JSON Schema (checked against its meta-schema).
pub fn check_schema(schema: &Value) -> Result<(), String> {
    if !schema.is_object() {
        return Err("not a JSON Schema (a schema is a JSON object)".into());
    }
    jsonschema::validator_for(schema)
        .map(|_| ())
        .map_err(|err| format!("not a valid JSON Schema: {err}"))
}

/// Checks the final message against `schema`: it must be JSON that conforms.
pub fn check_answer(schema: &Value, message: Option<&str>) -> Result<(), String> {
    let Some(message) = message else {
        return Err("the turn ended without a final message".into());
    };
    let answer: Value = serde_json::from_str(message.trim())
        .map_err(|err| format!("the final message is not JSON ({err})"))?;
    let validator = jsonschema::validator_for(schema)
        .map_err(|err| format!("the schema is unusable: {err}"))?;
    let problems: Vec<String> = validator
        .iter_errors(&answer)
        .take(5)
        .map(|err| {
            let at = err.instance_path().to_string();
            if at.is_empty() {
                err.to_string()
            } else {
                format!("at {at}: {err}")
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the final message does not conform to the output schema: {}",
            problems.join("; ")
        ))
    }
}

#[cfg(test)]
#[path = "output_schema_tests.rs"]
mod tests;
