//! API keys: the provider's `env_key` variable wins, else `$TROUPE_HOME/auth.json` (written
//! by `troupe login --with-api-key`, mode 0600), which maps variable names to keys as Codex's
//! does (`{"OPENAI_API_KEY": "sk-…"}`). Keys are read at request time only, so settings,
//! rollouts and events never hold one, and [`redact`] scrubs any text that leaves the sampler.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use thiserror::Error;
use troupe_messages::errors::ModelError;
use troupe_messages::settings::ProviderSettings;

/// File name of the stored keys under `$TROUPE_HOME`.
pub const AUTH_FILE: &str = "auth.json";

#[derive(Debug, Error)]
pub enum AuthError {
    #[error(
        "missing API key: set the environment variable {env_key} (model provider `{provider}`) \
         or store one with `troupe login --with-api-key`"
    )]
    Missing { env_key: String, provider: String },
    #[error("{}: {message}", path.display())]
    BadFile { path: PathBuf, message: String },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The key to send to `provider`, or `None` when it takes none (no `env_key`).
pub fn api_key(provider: &ProviderSettings, auth_file: &Path) -> Result<Option<String>, AuthError> {
    let Some(env_key) = &provider.env_key else {
        return Ok(None);
    };
    if let Some(key) = std::env::var(env_key).ok().filter(|k| !k.is_empty()) {
        return Ok(Some(key));
    }
    let stored = read_keys(auth_file)?;
    match stored.get(env_key).filter(|k| !k.is_empty()) {
        Some(key) => Ok(Some(key.clone())),
        None => Err(AuthError::Missing {
            env_key: env_key.clone(),
            provider: provider.id.clone(),
        }),
    }
}

/// The stored keys, by variable name (empty when there is no file).
pub fn read_keys(auth_file: &Path) -> Result<BTreeMap<String, String>, AuthError> {
    let text = match std::fs::read_to_string(auth_file) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(err) => {
            return Err(AuthError::BadFile {
                path: auth_file.to_path_buf(),
                message: err.to_string(),
            })
        }
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|err| AuthError::BadFile {
            path: auth_file.to_path_buf(),
            // The position only: serde's message could quote part of a key.
            message: format!(
                "not valid JSON (line {}, column {})",
                err.line(),
                err.column()
            ),
        })?;
    let object = value.as_object().ok_or_else(|| AuthError::BadFile {
        path: auth_file.to_path_buf(),
        message: "expected a JSON object of variable names to keys".into(),
    })?;
    Ok(object
        .iter()
        .filter_map(|(name, key)| key.as_str().map(|k| (name.clone(), k.to_string())))
        .collect())
}

/// Stores `key` under `env_key` (other entries kept); the file is written whole to a 0600
/// temporary file beside it and renamed over, so it is never readable by others or half
/// written.
pub fn store_key(auth_file: &Path, env_key: &str, key: &str) -> Result<(), AuthError> {
    let mut keys = read_keys(auth_file)?;
    keys.insert(env_key.to_string(), key.to_string());
    write_keys(auth_file, &keys)
}

/// Removes every stored key; `Ok(false)` when there was no file.
pub fn remove_keys(auth_file: &Path) -> Result<bool, AuthError> {
    match std::fs::remove_file(auth_file) {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(AuthError::Write {
            path: auth_file.to_path_buf(),
            source,
        }),
    }
}

fn write_keys(auth_file: &Path, keys: &BTreeMap<String, String>) -> Result<(), AuthError> {
    use std::os::unix::fs::OpenOptionsExt;
    let failed = |source| AuthError::Write {
        path: auth_file.to_path_buf(),
        source,
    };
    let dir = auth_file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(failed)?;
    let temp = dir.join(format!(".{AUTH_FILE}.{}.tmp", std::process::id()));
    let text = serde_json::to_string_pretty(keys).map_err(|e| failed(std::io::Error::other(e)))?;
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temp)
        .and_then(|mut file| {
            file.write_all(text.as_bytes())?;
            file.write_all(b"\n")?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&temp, auth_file));
    if let Err(err) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(failed(err));
    }
    Ok(())
}

/// `text` with every occurrence of `key` replaced (a provider may echo the key it rejected).
pub fn redact(text: &str, key: Option<&str>) -> String {
    match key.filter(|k| k.len() >= 4) {
        Some(key) if text.contains(key) => text.replace(key, "[REDACTED]"),
        _ => text.to_string(),
    }
}

/// [`redact`] over every message of an error.
pub fn redact_error(error: ModelError, key: Option<&str>) -> ModelError {
    let r = |text: String| redact(&text, key);
    match error {
        ModelError::ContextWindowExceeded { message } => ModelError::ContextWindowExceeded {
            message: r(message),
        },
        ModelError::QuotaExceeded { message } => ModelError::QuotaExceeded {
            message: r(message),
        },
        ModelError::Unauthorized { status, message } => ModelError::Unauthorized {
            status,
            message: r(message),
        },
        ModelError::BadRequest { status, message } => ModelError::BadRequest {
            status,
            message: r(message),
        },
        ModelError::RetriesExhausted { attempts, last } => ModelError::RetriesExhausted {
            attempts,
            last: r(last),
        },
        ModelError::ResponseFailed { message } => ModelError::ResponseFailed {
            message: r(message),
        },
        ModelError::LimitReached { message } => ModelError::LimitReached {
            message: r(message),
        },
        ModelError::Internal { message } => ModelError::Internal {
            message: r(message),
        },
    }
}
