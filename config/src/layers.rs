//! Config layers: each file is read and checked on its own (so errors carry its path and
//! line, and unknown keys are reported against it), then merged key by key.

use crate::error::ConfigError;
use crate::file::ConfigToml;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// One config file, parsed and type-checked.
#[derive(Debug, Clone)]
pub struct Layer {
    pub path: PathBuf,
    pub table: Table,
}

/// Reads `path` as a config layer; `Ok(None)` when it does not exist. Unknown keys are
/// appended to `warnings` as `path: unknown key a.b.c`.
pub fn read_layer(path: &Path, warnings: &mut Vec<String>) -> Result<Option<Layer>, ConfigError> {
    let text = match crate::regular_file::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    check_text(path, &text, warnings)?;
    let table = toml::from_str::<Table>(&text).map_err(|err| ConfigError::Parse {
        path: path.to_path_buf(),
        message: err.to_string(),
    })?;
    Ok(Some(Layer {
        path: path.to_path_buf(),
        table,
    }))
}

/// Type-checks a file's text against [`ConfigToml`], naming file, line and key on error.
pub fn check_text(path: &Path, text: &str, warnings: &mut Vec<String>) -> Result<(), ConfigError> {
    let parse_error = |message: String| ConfigError::Parse {
        path: path.to_path_buf(),
        message,
    };
    let deserializer =
        toml::Deserializer::parse(text).map_err(|err| parse_error(err.to_string()))?;
    let mut unknown = Vec::new();
    let mut note_unknown = |key: serde_ignored::Path<'_>| unknown.push(key.to_string());
    let ignored = serde_ignored::Deserializer::new(deserializer, &mut note_unknown);
    let result: Result<ConfigToml, _> = serde_path_to_error::deserialize(ignored);
    if let Err(err) = result {
        let key = err.path().to_string();
        let inner = err.into_inner();
        let line = inner
            .span()
            .map(|span| text[..span.start.min(text.len())].lines().count().max(1));
        return Err(ConfigError::Located {
            path: path.to_path_buf(),
            line,
            key,
            message: inner.message().to_string(),
        });
    }
    for key in unknown {
        warnings.push(crate::resolve::unknown_key_warning(
            &path.display().to_string(),
            &key,
        ));
    }
    Ok(())
}

/// Merges `upper` into `lower`: tables merge key by key, anything else is replaced.
pub fn merge(lower: &mut Table, upper: &Table) {
    for (key, value) in upper {
        match (lower.get_mut(key), value) {
            (Some(Value::Table(low)), Value::Table(up)) => merge(low, up),
            _ => {
                lower.insert(key.clone(), value.clone());
            }
        }
    }
}

/// The project root: the nearest ancestor of `cwd` holding one of `markers`; `cwd` itself
/// when none does (and when `markers` is empty).
pub fn project_root(cwd: &Path, markers: &[String]) -> PathBuf {
    if markers.is_empty() {
        return cwd.to_path_buf();
    }
    cwd.ancestors()
        .find(|dir| {
            markers.iter().any(|m| {
                let marker = dir.join(m);
                marker.exists() && !is_sandbox_placeholder(&marker)
            })
        })
        .unwrap_or(cwd)
        .to_path_buf()
}

/// Mode of the empty directory the Linux sandbox puts where a protected name (`.git`,
/// `.troupe`) is missing, to mount on while a sandbox runs (see the helper's `protected.rs`).
/// Owner-writable, so the user can still `git init` there meanwhile (the sandbox sees it
/// read-only either way).
pub const SANDBOX_PLACEHOLDER_MODE: u32 = 0o700;

/// Whether `path` may be such a placeholder (an empty directory of that mode): not a marker
/// (an empty `.git` is no repository either).
pub fn is_sandbox_placeholder(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.symlink_metadata().is_ok_and(|meta| {
        meta.is_dir()
            && meta.permissions().mode() & 0o7777 == SANDBOX_PLACEHOLDER_MODE
            && std::fs::read_dir(path).is_ok_and(|mut entries| entries.next().is_none())
    })
}

/// Directories from `root` down to `cwd`, inclusive, root first.
pub fn dirs_root_to_cwd(root: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = cwd
        .ancestors()
        .take_while(|dir| dir.starts_with(root))
        .map(Path::to_path_buf)
        .collect();
    dirs.reverse();
    dirs
}
