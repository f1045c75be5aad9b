//! `view_image {path}`: attach a local image to the conversation. The output that goes back
//! to the model is the image itself, as Codex 0.169 sends it: a `function_call_output` whose
//! `output` is `[{"type":"input_image","image_url":"data:…","detail":"original"}]`.
//!
//! The runtime reads the file itself (no sandboxed process), so it applies the thread's read
//! policy here: a path under `sandbox_deny_read` is refused, judged on the file actually
//! opened (its real path, so no symlink or rename between check and read gets around it).
//! Format by magic bytes and the size limit come from `local_image` (shared with `exec -i`).

use super::local_image::{data_url_of_file, open_image, ImageError};
use crate::tool_orchestrator::contract::parse_args as parse;
use crate::tool_orchestrator::contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::json;
use std::path::{Path, PathBuf};
use troupe_messages::items::ContentItem;
use troupe_messages::tools::ToolSpec;

/// Handler of `view_image`.
pub struct ViewImageHandler;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ViewImageArgs {
    path: String,
}

impl ToolHandler for ViewImageHandler {
    fn spec(&self) -> ToolSpec {
        // Codex 0.169's spec, as captured from its first request.
        ToolSpec::Function {
            name: "view_image".into(),
            description: "View a local image file from the filesystem when visual inspection \
                          is needed. Use this for images already available on disk."
                .into(),
            strict: false,
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Local filesystem path to an image file."
                    }
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        }
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Shared
    }

    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        Box::pin(async move {
            let args: ViewImageArgs = match parse("view_image", &ctx.call.payload) {
                Ok(args) => args,
                Err(message) => return ToolOutcome::error(message),
            };
            if args.path.trim().is_empty() {
                return ToolOutcome::error("invalid arguments for view_image: `path` is empty");
            }
            let path = ctx.settings.cwd.join(&args.path);
            let deny_read = [
                ctx.settings.sandbox.deny_read.clone(),
                ctx.settings.sandbox.stored_keys.clone(),
            ]
            .concat();
            let read = {
                let path = path.clone();
                tokio::task::spawn_blocking(move || read_image(&path, &deny_read))
            };
            match read.await {
                Ok(Ok(image_url)) => ToolOutcome::with_parts(
                    format!("attached image {}", path.display()),
                    vec![ContentItem::InputImage {
                        image_url,
                        detail: Some("original".into()),
                    }],
                ),
                Ok(Err(message)) => ToolOutcome::error(message),
                Err(err) => ToolOutcome::error(format!("view_image: the read failed: {err}")),
            }
        })
    }
}

/// The image at `path` as a `data:` URL, or the message the model reads (blocking).
pub fn read_image(path: &Path, deny_read: &[PathBuf]) -> Result<String, String> {
    let file = open_image(path).map_err(|err| {
        // Codex's wording for a missing file, kept so models trained on it recognise it.
        format!("unable to locate image at `{}`: {err}", path.display())
    })?;
    let real = real_path_of(&file).unwrap_or_else(|| path.to_path_buf());
    if let Some(denied) = deny_read
        .iter()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .find(|denied| real.starts_with(denied))
    {
        return Err(format!(
            "unable to read image at `{}`: it is under a deny-read path ({}, sandbox_deny_read)",
            path.display(),
            denied.display()
        ));
    }
    data_url_of_file(file, path).map_err(|err| match err {
        ImageError::NotAnImage { .. } => format!(
            "unable to process image: invalid or unsupported image data ({err}; \
             PNG, JPEG, GIF and WebP are supported)"
        ),
        ImageError::Unreadable { .. }
        | ImageError::NotAFile { .. }
        | ImageError::TooLarge { .. } => {
            format!("unable to read image: {err}")
        }
    })
}

/// The path the kernel resolved for an open file (every symlink followed).
fn real_path_of(file: &std::fs::File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

#[cfg(test)]
#[path = "view_image_tests.rs"]
mod tests;
