//! Project files: `.troupe/config.toml` and `.troupe/rules/*.rules` in every directory from
//! the project root down to the cwd. They are read only in a trusted directory, and each
//! one only while its content matches the hash the user pinned with `troupe trust` (a
//! sandboxed command can write inside the workspace, so a file there proves nothing).
//! Each file is read once: the bytes that were hashed are the bytes that are parsed.

use crate::error::ConfigError;
use crate::layers::{check_text, dirs_root_to_cwd, Layer};
use crate::trust::{sha256_hex, TrustStore};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Table;

/// Keys only the user's own config may set: where requests (and the API key) go, and what
/// environment commands inherit. Dropped from project files with a warning.
pub const USER_ONLY_KEYS: &[&str] = &[
    "model_provider",
    "model_providers",
    "shell_environment_policy",
    "projects",
    "network_proxy",
];

/// What a project file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectFileKind {
    Config,
    Rules,
}

/// One project file, read.
#[derive(Debug, Clone)]
pub struct ProjectFile {
    pub path: PathBuf,
    pub kind: ProjectFileKind,
    pub content: Vec<u8>,
    pub sha256: String,
}

/// Every project file from `root` down to `cwd` (both canonical), root first; in each
/// directory `config.toml` first, then the rules files by name.
pub fn project_files(root: &Path, cwd: &Path) -> Result<Vec<ProjectFile>, ConfigError> {
    let mut found = Vec::new();
    for dir in dirs_root_to_cwd(root, cwd) {
        let troupe = dir.join(".troupe");
        push_file(
            &mut found,
            troupe.join("config.toml"),
            ProjectFileKind::Config,
        )?;
        let rules_dir = troupe.join("rules");
        let mut rules: Vec<PathBuf> = match std::fs::read_dir(&rules_dir) {
            Ok(entries) => entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|ext| ext == "rules"))
                .collect(),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: rules_dir,
                    source,
                })
            }
        };
        rules.sort();
        for path in rules {
            push_file(&mut found, path, ProjectFileKind::Rules)?;
        }
    }
    Ok(found)
}

fn push_file(
    found: &mut Vec<ProjectFile>,
    path: PathBuf,
    kind: ProjectFileKind,
) -> Result<(), ConfigError> {
    match std::fs::read(&path) {
        Ok(content) => {
            found.push(ProjectFile {
                sha256: sha256_hex(&content),
                path,
                kind,
                content,
            });
            Ok(())
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(ConfigError::Read { path, source }),
    }
}

/// What a trusted project contributes.
#[derive(Debug, Default)]
pub struct ProjectLayers {
    /// Config layers, root first (nearest wins when merged in order).
    pub layers: Vec<Layer>,
    /// Rules files to load: path → pinned hash (re-checked when they are loaded).
    pub pinned_rules: BTreeMap<PathBuf, String>,
}

/// The pinned files of the project at `cwd`; every other file is skipped with a warning
/// naming it and the command that trusts it.
pub fn load_project(
    store: &TrustStore,
    root: &Path,
    cwd: &Path,
    warnings: &mut Vec<String>,
) -> Result<ProjectLayers, ConfigError> {
    let mut out = ProjectLayers::default();
    for file in project_files(root, cwd)? {
        if !store.is_pinned(&file.path, &file.content) {
            let state = if store.files.contains_key(&file.path) {
                "changed since you trusted it"
            } else {
                "new, not trusted yet"
            };
            warnings.push(format!(
                "{}: ignored ({state}); review it, then run `troupe trust {}` to use it",
                file.path.display(),
                cwd.display()
            ));
            continue;
        }
        match file.kind {
            ProjectFileKind::Rules => {
                out.pinned_rules.insert(file.path, file.sha256);
            }
            ProjectFileKind::Config => {
                let text = String::from_utf8(file.content).map_err(|_| ConfigError::Parse {
                    path: file.path.clone(),
                    message: "not UTF-8".into(),
                })?;
                check_text(&file.path, &text, warnings)?;
                let mut table =
                    toml::from_str::<Table>(&text).map_err(|err| ConfigError::Parse {
                        path: file.path.clone(),
                        message: err.to_string(),
                    })?;
                for key in USER_ONLY_KEYS {
                    if table.remove(*key).is_some() {
                        warnings.push(format!(
                            "{}: `{key}` is ignored in project config; set it in your own \
                             config.toml",
                            file.path.display()
                        ));
                    }
                }
                out.layers.push(Layer {
                    path: file.path,
                    table,
                });
            }
        }
    }
    Ok(out)
}
