use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum CheckpointError {
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("checkpoint {0} not found (pruned, or never written)")]
    Missing(String),
    #[error("checkpoint {id} is unreadable: {reason}")]
    Corrupt { id: String, reason: String },
    #[error("object {0} of the checkpoint is missing or damaged")]
    BadObject(String),
    #[error("root {0} is not a directory Troupe can open without following a symlink")]
    BadRoot(PathBuf),
}

impl CheckpointError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }
}
