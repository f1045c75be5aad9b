//! Codex's `fs/*` methods: the client's own file operations on this machine's filesystem,
//! as the user running the server (as in Codex: not sandboxed, not part of a turn). Paths
//! must be absolute; each error names the path and what failed.

use base64::Engine;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use troupe_app_server_protocol::protocol::*;

/// Runs `fs/<name>` on a blocking thread.
pub async fn handle(method: &str, params: Value) -> Option<Result<Value, String>> {
    let method = method.strip_prefix("fs/")?.to_string();
    if !matches!(
        method.as_str(),
        "readFile"
            | "writeFile"
            | "createDirectory"
            | "getMetadata"
            | "readDirectory"
            | "remove"
            | "copy"
    ) {
        return None;
    }
    let run = move || match method.as_str() {
        "readFile" => read_file(parse(params)?),
        "writeFile" => write_file(parse(params)?),
        "createDirectory" => create_directory(parse(params)?),
        "getMetadata" => get_metadata(parse(params)?),
        "readDirectory" => read_directory(parse(params)?),
        "remove" => remove(parse(params)?),
        _ => copy(parse(params)?),
    };
    Some(
        tokio::task::spawn_blocking(run)
            .await
            .unwrap_or_else(|err| Err(format!("the file operation failed: {err}"))),
    )
}

fn parse<T: serde::de::DeserializeOwned>(params: Value) -> Result<T, String> {
    serde_json::from_value(params)
        .map_err(|err| troupe_app_server_protocol::jsonrpc::invalid_params(&err))
}

fn value(result: impl serde::Serialize) -> Result<Value, String> {
    serde_json::to_value(result).map_err(|err| err.to_string())
}

/// Codex's `AbsolutePathBuf`: a relative path is refused.
pub fn absolute(path: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(path);
    if path.is_absolute() {
        Ok(path)
    } else {
        Err(format!(
            "Invalid request: path `{}` is not absolute",
            path.display()
        ))
    }
}

fn failed(what: &str, path: &Path, err: std::io::Error) -> String {
    format!("{what} {}: {err}", path.display())
}

fn read_file(params: FsPathParams) -> Result<Value, String> {
    let path = absolute(&params.path)?;
    let bytes = std::fs::read(&path).map_err(|e| failed("cannot read", &path, e))?;
    value(FsReadFileResponse {
        data_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}

fn write_file(params: FsWriteFileParams) -> Result<Value, String> {
    let path = absolute(&params.path)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(params.data_base64.as_bytes())
        .map_err(|err| format!("Invalid request: dataBase64 is not base64: {err}"))?;
    std::fs::write(&path, bytes).map_err(|e| failed("cannot write", &path, e))?;
    value(EmptyResponse {})
}

fn create_directory(params: FsCreateDirectoryParams) -> Result<Value, String> {
    let path = absolute(&params.path)?;
    let made = if params.recursive.unwrap_or(true) {
        std::fs::create_dir_all(&path)
    } else {
        std::fs::create_dir(&path)
    };
    made.map_err(|e| failed("cannot create directory", &path, e))?;
    value(EmptyResponse {})
}

fn millis(time: std::io::Result<SystemTime>) -> i64 {
    time.ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64)
}

fn get_metadata(params: FsPathParams) -> Result<Value, String> {
    let path = absolute(&params.path)?;
    let link = std::fs::symlink_metadata(&path).map_err(|e| failed("cannot stat", &path, e))?;
    // A symlink reports what it resolves to (a dangling one: neither file nor directory).
    let target = std::fs::metadata(&path).ok();
    let meta = target.as_ref().unwrap_or(&link);
    value(FsGetMetadataResponse {
        is_directory: target.as_ref().is_some_and(std::fs::Metadata::is_dir),
        is_file: target.as_ref().is_some_and(std::fs::Metadata::is_file),
        is_symlink: link.file_type().is_symlink(),
        created_at_ms: millis(meta.created()),
        modified_at_ms: millis(meta.modified()),
    })
}

fn read_directory(params: FsPathParams) -> Result<Value, String> {
    let path = absolute(&params.path)?;
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(&path).map_err(|e| failed("cannot list", &path, e))? {
        let entry = entry.map_err(|e| failed("cannot list", &path, e))?;
        let target = std::fs::metadata(entry.path()).ok();
        entries.push(FsReadDirectoryEntry {
            file_name: entry.file_name().to_string_lossy().into_owned(),
            is_directory: target.as_ref().is_some_and(std::fs::Metadata::is_dir),
            is_file: target.as_ref().is_some_and(std::fs::Metadata::is_file),
        });
    }
    entries.sort_by(|a, b| a.file_name.cmp(&b.file_name));
    value(FsReadDirectoryResponse { entries })
}

fn remove(params: FsRemoveParams) -> Result<Value, String> {
    let path = absolute(&params.path)?;
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound && params.force.unwrap_or(true) => {
            return value(EmptyResponse {})
        }
        Err(err) => return Err(failed("cannot remove", &path, err)),
    };
    let removed = if !meta.is_dir() {
        std::fs::remove_file(&path)
    } else if params.recursive.unwrap_or(true) {
        std::fs::remove_dir_all(&path)
    } else {
        std::fs::remove_dir(&path)
    };
    removed.map_err(|e| failed("cannot remove", &path, e))?;
    value(EmptyResponse {})
}

fn copy(params: FsCopyParams) -> Result<Value, String> {
    let source = absolute(&params.source_path)?;
    let destination = absolute(&params.destination_path)?;
    let meta = std::fs::metadata(&source).map_err(|e| failed("cannot copy", &source, e))?;
    if meta.is_dir() {
        if !params.recursive {
            return Err(format!(
                "Invalid request: {} is a directory; copying it needs `recursive: true`",
                source.display()
            ));
        }
        if destination.starts_with(&source) {
            return Err(format!(
                "Invalid request: cannot copy {} into itself ({})",
                source.display(),
                destination.display()
            ));
        }
        copy_tree(&source, &destination)?;
    } else {
        std::fs::copy(&source, &destination)
            .map_err(|e| failed("cannot copy to", &destination, e))?;
    }
    value(EmptyResponse {})
}

/// Copies a directory tree; symlinks are copied as links, not followed.
fn copy_tree(source: &Path, destination: &Path) -> Result<(), String> {
    std::fs::create_dir_all(destination)
        .map_err(|e| failed("cannot create directory", destination, e))?;
    for entry in std::fs::read_dir(source).map_err(|e| failed("cannot list", source, e))? {
        let entry = entry.map_err(|e| failed("cannot list", source, e))?;
        let from = entry.path();
        let to = destination.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(|e| failed("cannot stat", &from, e))?;
        if kind.is_dir() {
            copy_tree(&from, &to)?;
        } else if kind.is_symlink() {
            let target = std::fs::read_link(&from).map_err(|e| failed("cannot read", &from, e))?;
            std::os::unix::fs::symlink(target, &to)
                .map_err(|e| failed("cannot create link", &to, e))?;
        } else {
            std::fs::copy(&from, &to).map_err(|e| failed("cannot copy to", &to, e))?;
        }
    }
    Ok(())
}
