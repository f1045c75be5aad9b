//! The store on disk: `objects/<2 hex>/<62 hex>` (contents by SHA-256, written once),
//! `manifests/<id>.json` (one per checkpoint, written last and atomically), `threads/`
//! (each thread's index of checkpoints, [`crate::index`]) and `rollouts/` (the rollouts a
//! rewind replaced, so it can be undone). Everything is private to the user (0700 / 0600).

use crate::error::CheckpointError;
use crate::manifest::{Manifest, MANIFEST_VERSION};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// A checkpoint store rooted at one directory (`$TROUPE_HOME/checkpoints`).
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// Opens (creating) the store at `dir`.
    pub fn open(dir: &Path) -> Result<Self, CheckpointError> {
        for sub in ["objects", "manifests", "threads", "rollouts", "tmp"] {
            let path = dir.join(sub);
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&path)
                .map_err(CheckpointError::io("cannot create", &path))?;
        }
        Ok(Self {
            dir: dir.to_path_buf(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn object_path(&self, hash: &str) -> PathBuf {
        let (head, tail) = hash.split_at(hash.len().min(2));
        self.dir.join("objects").join(head).join(tail)
    }

    pub(crate) fn manifest_path(&self, id: &str) -> PathBuf {
        self.dir.join("manifests").join(format!("{id}.json"))
    }

    /// Where a thread's index lives.
    pub fn thread_index(&self, thread: &str) -> PathBuf {
        self.dir.join("threads").join(format!("{thread}.jsonl"))
    }

    /// Where a rollout replaced by a rewind is kept.
    pub fn rollout_backup(&self, thread: &str, id: &str) -> PathBuf {
        self.dir
            .join("rollouts")
            .join(thread)
            .join(format!("{id}.jsonl"))
    }

    /// Hashes `source` to its end; with `keep`, stores the content (once: an object that
    /// exists already is not written again). Returns (hash, bytes read).
    pub(crate) fn put(
        &self,
        source: &mut std::fs::File,
        keep: bool,
    ) -> Result<(String, u64), CheckpointError> {
        let len = source.metadata().map_or(u64::MAX, |m| m.len());
        if len > IN_MEMORY {
            return self.put_streamed(source, keep);
        }
        // Hashed first, so an object the store has already costs no file created.
        let mut bytes = Vec::with_capacity(len as usize);
        source
            .read_to_end(&mut bytes)
            .map_err(CheckpointError::io("cannot read a file of", &self.dir))?;
        let hash = hex(&Sha256::digest(&bytes));
        let size = bytes.len() as u64;
        if keep {
            let path = self.object_path(&hash);
            if !path.exists() {
                let parent = path.parent().unwrap_or(&self.dir);
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(parent)
                    .map_err(CheckpointError::io("cannot create", parent))?;
                write_object(&self.dir.join("tmp"), &path, &bytes)?;
            }
        }
        Ok((hash, size))
    }

    /// [`Store::put`] for a file too large to hold in memory: copied to a temp file while
    /// it is hashed.
    fn put_streamed(
        &self,
        source: &mut impl Read,
        keep: bool,
    ) -> Result<(String, u64), CheckpointError> {
        let mut hasher = Sha256::new();
        let mut size = 0u64;
        let mut buf = vec![0u8; 64 * 1024];
        let tmp_path = self.dir.join("tmp").join(crate::fsat::temp_name());
        let mut tmp = if keep {
            Some(
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&tmp_path)
                    .map_err(CheckpointError::io("cannot create", &tmp_path))?,
            )
        } else {
            None
        };
        let result = (|| -> Result<(), CheckpointError> {
            loop {
                let n = source
                    .read(&mut buf)
                    .map_err(CheckpointError::io("cannot read a file of", &self.dir))?;
                if n == 0 {
                    return Ok(());
                }
                hasher.update(&buf[..n]);
                size += n as u64;
                if let Some(tmp) = tmp.as_mut() {
                    tmp.write_all(&buf[..n])
                        .map_err(CheckpointError::io("cannot write", &tmp_path))?;
                }
            }
        })();
        let hash = hex(&hasher.finalize());
        let Some(tmp) = tmp else {
            return result.map(|()| (hash, size));
        };
        let stored = result.and_then(|()| {
            let path = self.object_path(&hash);
            if path.exists() {
                return Ok(());
            }
            tmp.sync_all()
                .map_err(CheckpointError::io("cannot write", &tmp_path))?;
            if let Some(parent) = path.parent() {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(parent)
                    .map_err(CheckpointError::io("cannot create", parent))?;
            }
            std::fs::rename(&tmp_path, &path).map_err(CheckpointError::io("cannot store", &path))
        });
        let _ = std::fs::remove_file(&tmp_path);
        stored.map(|()| (hash, size))
    }

    /// The content of object `hash`, checked against its hash.
    pub fn read_object(&self, hash: &str) -> Result<Vec<u8>, CheckpointError> {
        let path = self.object_path(hash);
        let bytes =
            std::fs::read(&path).map_err(|_| CheckpointError::BadObject(hash.to_string()))?;
        if hex(&Sha256::digest(&bytes)) != hash {
            return Err(CheckpointError::BadObject(hash.to_string()));
        }
        Ok(bytes)
    }

    /// Writes `manifest` durably: temp file, fsync, rename, fsync of the directory. Until
    /// the rename nobody sees it, so a torn checkpoint is never used.
    pub fn write_manifest(&self, manifest: &Manifest) -> Result<(), CheckpointError> {
        let path = self.manifest_path(&manifest.id);
        let bytes = serde_json::to_vec(manifest).map_err(|err| CheckpointError::Corrupt {
            id: manifest.id.clone(),
            reason: err.to_string(),
        })?;
        write_atomically(&self.dir.join("tmp"), &path, &bytes)
    }

    /// Checkpoint `id`, whether written whole or as a delta.
    pub fn load_manifest(&self, id: &str) -> Result<Manifest, CheckpointError> {
        self.load_chained(id, 0)
    }

    pub(crate) fn load_chained(&self, id: &str, depth: u32) -> Result<Manifest, CheckpointError> {
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(CheckpointError::Missing(id.to_string()));
        }
        let path = self.manifest_path(id);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return self.load_delta(id, depth);
            }
            Err(err) => return Err(CheckpointError::io("cannot read", &path)(err)),
        };
        let mut manifest: Manifest =
            serde_json::from_slice(&bytes).map_err(|err| CheckpointError::Corrupt {
                id: id.to_string(),
                reason: err.to_string(),
            })?;
        manifest.written.whole_bytes = bytes.len() as u64;
        if manifest.version > MANIFEST_VERSION {
            return Err(CheckpointError::Corrupt {
                id: id.to_string(),
                reason: format!("written in a newer format ({})", manifest.version),
            });
        }
        Ok(manifest)
    }

    /// A fresh checkpoint id: time first, so ids sort by age.
    pub fn new_id() -> String {
        format!("{:013}-{:08x}", now_ms(), rand::random::<u32>())
    }
}

/// Writes `bytes` to `path` through a temp file in `tmp_dir` (same filesystem), fsynced,
/// renamed into place, the directory fsynced.
pub fn write_atomically(tmp_dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    let tmp = write_temp(tmp_dir, bytes)?;
    if let Some(parent) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(parent)
            .map_err(CheckpointError::io("cannot create", parent))?;
    }
    std::fs::rename(&tmp, path).map_err(CheckpointError::io("cannot write", path))?;
    if let Some(parent) = path.parent() {
        if let Ok(dir) = std::fs::File::open(parent) {
            let _ = dir.sync_all();
        }
    }
    Ok(())
}

/// Files up to this size are read whole to be hashed (and stored only when new).
const IN_MEMORY: u64 = 8 << 20;

/// `bytes` in a new file of `tmp_dir`, fsynced: its path.
fn write_temp(tmp_dir: &Path, bytes: &[u8]) -> Result<PathBuf, CheckpointError> {
    let tmp = tmp_dir.join(crate::fsat::temp_name());
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()
    })();
    if let Err(err) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(CheckpointError::io("cannot write", &tmp)(err));
    }
    Ok(tmp)
}

/// Writes a new object: temp file, fsync, rename (an object is never seen half written).
fn write_object(tmp_dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), CheckpointError> {
    let tmp = write_temp(tmp_dir, bytes)?;
    std::fs::rename(&tmp, path).map_err(|err| {
        let _ = std::fs::remove_file(&tmp);
        CheckpointError::io("cannot store", path)(err)
    })
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}
