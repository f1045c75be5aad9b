//! `troupe trust [DIR]`: shows the project files Troupe would obey in DIR (every
//! `.troupe/config.toml` and `.troupe/rules/*.rules` from the project root down to DIR) with
//! their SHA-256, then trusts DIR and pins those exact contents in `$TROUPE_HOME/trust.toml`.
//! A file changed later (by anyone, a sandboxed command included) is ignored until the user
//! runs this again.

use anyhow::{Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use troupe_config::layers::project_root;
use troupe_config::project::{project_files, ProjectFileKind};
use troupe_config::trust::{TrustStore, TRUST_FILE};

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The directory to trust (default: the current directory).
    dir: Option<PathBuf>,
    /// Only show the files and whether they are pinned; record nothing.
    #[arg(long)]
    show: bool,
}

pub fn run(home: &Path, args: TrustArgs) -> Result<()> {
    let dir = match args.dir {
        Some(dir) => dir,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let dir = std::fs::canonicalize(&dir).with_context(|| format!("{}", dir.display()))?;
    let markers = root_markers(home)?;
    let root = project_root(&dir, &markers);
    let files = project_files(&root, &dir)?;
    let mut store = TrustStore::load(home)?;
    println!("Project root: {}", root.display());
    if files.is_empty() {
        println!("No project files (.troupe/config.toml, .troupe/rules/*.rules) from the root down to {}.", dir.display());
    }
    for file in &files {
        let state = match store.files.get(&file.path) {
            Some(sha) if *sha == file.sha256 => "pinned ",
            Some(_) => "CHANGED",
            None => "NEW    ",
        };
        let kind = match file.kind {
            ProjectFileKind::Config => "config",
            ProjectFileKind::Rules => "rules ",
        };
        println!(
            "  {state} {kind} sha256:{}  {}",
            file.sha256,
            file.path.display()
        );
    }
    if args.show {
        let trusted = if store.trusts_dir(&dir) {
            "trusted"
        } else {
            "not trusted"
        };
        println!("{} is {trusted}; nothing recorded (--show).", dir.display());
        return Ok(());
    }
    store.dirs.insert(dir.clone());
    for file in files {
        store.files.insert(file.path, file.sha256);
    }
    store.save(home)?;
    println!(
        "Trusted {} and pinned the files above in {}.",
        dir.display(),
        home.join(TRUST_FILE).display()
    );
    Ok(())
}

/// `exec --trust`: trusts `dir` and pins its project files as they are now, quietly (exec's
/// stdout is the answer); the number of files pinned.
pub fn trust_quietly(home: &Path, dir: &Path) -> Result<usize> {
    let dir = std::fs::canonicalize(dir).with_context(|| format!("--trust {}", dir.display()))?;
    let root = project_root(&dir, &root_markers(home)?);
    let files = project_files(&root, &dir)?;
    let mut store = TrustStore::load(home)?;
    store.dirs.insert(dir);
    let count = files.len();
    for file in files {
        store.files.insert(file.path, file.sha256);
    }
    store.save(home)?;
    Ok(count)
}

/// The project files trusting `dir` would pin, with their SHA-256 as they are now (the UI's
/// trust screen lists them, then pins exactly these contents).
pub fn pinnable_files(home: &Path, dir: &Path) -> Result<Vec<(PathBuf, String)>> {
    let root = project_root(dir, &root_markers(home)?);
    Ok(project_files(&root, dir)?
        .into_iter()
        .map(|file| (file.path, file.sha256))
        .collect())
}

/// The UI's trust screen answered "yes": trusts `dir` (canonical) and pins the contents the
/// screen was shown with; a file changed since then stays inert until `troupe trust`.
pub fn trust_shown(home: &Path, dir: &Path, files: Vec<(PathBuf, String)>) -> Result<()> {
    let mut store = TrustStore::load(home)?;
    store.dirs.insert(dir.to_path_buf());
    store.files.extend(files);
    store.save(home)?;
    Ok(())
}

/// The UI's trust screen answered "no": remember it so the screen is not shown again in
/// `dir` (canonical); the directory stays untrusted.
pub fn decline(home: &Path, dir: &Path) -> Result<()> {
    let mut store = TrustStore::load(home)?;
    store.declined.insert(dir.to_path_buf());
    store.save(home)?;
    Ok(())
}

/// Whether the user already answered the trust question for `dir` (canonical).
pub fn has_decided(home: &Path, dir: &Path) -> Result<bool> {
    Ok(TrustStore::load(home)?.has_decided(dir))
}

/// `project_root_markers` from the user's own config (system, then user), default `.git`.
fn root_markers(home: &Path) -> Result<Vec<String>> {
    let mut markers = None;
    for path in [
        troupe_config::resolve::system_dir().join("config.toml"),
        home.join("config.toml"),
    ] {
        let mut ignored = Vec::new();
        if let Some(layer) = troupe_config::layers::read_layer(&path, &mut ignored)? {
            if let Some(list) = layer
                .table
                .get("project_root_markers")
                .and_then(|v| v.as_array())
            {
                markers = Some(
                    list.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect(),
                );
            }
        }
    }
    Ok(markers.unwrap_or_else(|| vec![".git".to_string()]))
}
