//! Random sequences of edits, removals, moves, mode changes, links, binary writes, new
//! nested directories and directory removals, a checkpoint after each step; restoring any
//! checkpoint must give back that tree byte for byte (modes and links included), and leave
//! the files `.gitignore` ignores alone. Seeded, so a failure names its case.
//!
//! Checkpoints are taken through a [`Tracker`] (inotify, relisting only what changed) and
//! each must record the same trees as a full walk; they are written as deltas where they
//! can be, and restored from what a load of that chain gives back.

use super::tracker_tests::without_stat;
use super::{Manifest, Options, Store, Tracker};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq)]
enum Seen {
    File { mode: u32, bytes: Vec<u8> },
    Dir { mode: u32 },
    Link { target: PathBuf },
}

/// The tree as plain `std::fs` sees it, `.git` aside; `ignored` picks the ignored paths.
fn snapshot(root: &Path, ignored: bool) -> BTreeMap<String, Seen> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let seen = if meta.file_type().is_symlink() {
                Seen::Link {
                    target: std::fs::read_link(&path).unwrap(),
                }
            } else if meta.is_dir() {
                stack.push(path.clone());
                Seen::Dir { mode }
            } else {
                Seen::File {
                    mode,
                    bytes: std::fs::read(&path).unwrap(),
                }
            };
            if is_ignored(&rel) == ignored {
                out.insert(rel, seen);
            }
        }
    }
    out
}

fn is_ignored(rel: &str) -> bool {
    rel.split('/').any(|part| part == "junk") || rel.ends_with(".log")
}

/// Real directories (no links), the root as "".
fn dirs(root: &Path) -> Vec<String> {
    let mut out = vec![String::new()];
    out.extend(
        snapshot(root, false)
            .into_iter()
            .filter(|(_, seen)| matches!(seen, Seen::Dir { .. }))
            .map(|(rel, _)| rel),
    );
    out
}

fn entries(root: &Path, pick: impl Fn(&Seen) -> bool) -> Vec<String> {
    snapshot(root, false)
        .into_iter()
        // `.gitignore` stays as written: the test is about what it ignores.
        .filter(|(rel, seen)| rel != ".gitignore" && pick(seen))
        .map(|(rel, _)| rel)
        .collect()
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

fn random_bytes(rng: &mut StdRng) -> Vec<u8> {
    let len = rng.gen_range(0..300);
    if rng.gen_bool(0.5) {
        (0..len).map(|_| rng.gen()).collect()
    } else {
        (0..len).map(|_| rng.gen_range(b'a'..=b'z')).collect()
    }
}

fn step(root: &Path, rng: &mut StdRng, git: bool) {
    let all_dirs = dirs(root);
    let dir = all_dirs[rng.gen_range(0..all_dirs.len())].clone();
    let name = format!("n{}", rng.gen_range(0..12));
    let files = entries(root, |s| matches!(s, Seen::File { .. }));
    let pick = |rng: &mut StdRng, list: &[String]| list[rng.gen_range(0..list.len())].clone();
    match rng.gen_range(0..11) {
        0 | 1 => {
            let path = root.join(join(&dir, &name));
            if std::fs::symlink_metadata(&path).is_err() {
                std::fs::write(&path, random_bytes(rng)).unwrap();
            }
        }
        2 if !files.is_empty() => {
            std::fs::write(root.join(pick(rng, &files)), random_bytes(rng)).unwrap();
        }
        3 if !files.is_empty() => std::fs::remove_file(root.join(pick(rng, &files))).unwrap(),
        4 => {
            let all = entries(root, |_| true);
            if !all.is_empty() {
                let from = pick(rng, &all);
                let to = root.join(join(&dir, &format!("m{}", rng.gen_range(0..12))));
                let inside = to.starts_with(root.join(&from));
                if !inside && std::fs::symlink_metadata(&to).is_err() {
                    std::fs::rename(root.join(&from), &to).unwrap();
                }
            }
        }
        5 if !files.is_empty() => {
            let mode = (rng.gen_range(0..0o10000) | 0o600) & 0o7777;
            let path = root.join(pick(rng, &files));
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        6 => {
            let path = root.join(join(&dir, &format!("l{}", rng.gen_range(0..5))));
            let target = match rng.gen_range(0..3) {
                0 => "../../../etc/passwd".to_string(),
                1 => format!("n{}", rng.gen_range(0..12)),
                _ => "/nowhere/at/all".to_string(),
            };
            if std::fs::symlink_metadata(&path).is_err() {
                symlink(target, path).unwrap();
            }
        }
        7 => {
            let nested = root.join(join(
                &dir,
                &format!("d{}/e{}", rng.gen_range(0..4), rng.gen_range(0..4)),
            ));
            std::fs::create_dir_all(&nested).unwrap_or(());
            if nested.is_dir() {
                std::fs::write(nested.join("leaf"), random_bytes(rng)).unwrap();
            }
        }
        8 if !dir.is_empty() => std::fs::remove_dir_all(root.join(&dir)).unwrap(),
        9 if !dir.is_empty() => {
            let mode = (rng.gen_range(0..0o1000) | 0o700) & 0o777;
            let path = root.join(&dir);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        10 if git => {
            // Ignored files come and go; a restore must leave them as they are.
            let junk = root.join(join(&dir, "junk"));
            std::fs::create_dir_all(&junk).unwrap_or(());
            if junk.is_dir() {
                std::fs::write(
                    junk.join(format!("x{}", rng.gen_range(0..3))),
                    random_bytes(rng),
                )
                .unwrap();
            }
            let log = root.join(join(&dir, "out.log"));
            if !log.is_dir() {
                std::fs::write(log, random_bytes(rng)).unwrap();
            }
        }
        _ => {}
    }
}

pub(super) fn options() -> Options {
    Options {
        max_dir_bytes: u64::MAX,
        max_root_bytes: u64::MAX,
        exclude: Vec::new(),
        keep: true,
    }
}

/// Takes a checkpoint through `tracker` and checks it against a full walk (contents,
/// kinds, modes and what is left out; the stat cache aside).
fn take(
    tracker: &mut Tracker,
    store: &Store,
    roots: &[PathBuf],
    last: Option<&Manifest>,
    seed: u64,
) -> Manifest {
    let quick = tracker.take(store, roots, last).unwrap();
    let walked = store.take(roots, last, &options()).unwrap();
    let shape = |m: &Manifest| {
        m.roots
            .iter()
            .map(|r| (r.root.clone(), without_stat(r), r.skipped.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        shape(&quick),
        shape(&walked),
        "seed {seed}: the tracker and the walk differ"
    );
    quick
}

fn run_case(seed: u64, git: bool) {
    let mut rng = StdRng::seed_from_u64(seed);
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("tree");
    std::fs::create_dir(&root).unwrap();
    let root = std::fs::canonicalize(&root).unwrap();
    if git {
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(root.join(".gitignore"), "junk/\n*.log\n").unwrap();
    }
    let store = Store::open(&work.path().join("store")).unwrap();
    let roots = vec![root.clone()];
    let mut taken: Vec<(Manifest, BTreeMap<String, Seen>)> = Vec::new();
    let mut last: Option<Manifest> = None;
    let mut tracker = Tracker::new(options(), true);
    for _ in 0..rng.gen_range(4..10) {
        for _ in 0..rng.gen_range(1..6) {
            step(&root, &mut rng, git);
        }
        let mut manifest = take(&mut tracker, &store, &roots, last.as_ref(), seed);
        store
            .write_manifest_over(&mut manifest, last.as_ref())
            .unwrap();
        taken.push((manifest.clone(), snapshot(&root, false)));
        last = Some(manifest);
    }
    let git_head = git.then(|| std::fs::read(root.join(".git/HEAD")).unwrap());
    let mut order: Vec<usize> = (0..taken.len()).collect();
    order.sort_by_key(|_| rng.gen::<u32>());
    for index in order {
        if rng.gen_bool(0.3) {
            step(&root, &mut rng, git);
        }
        let ignored_before = snapshot(&root, true);
        let current = take(&mut tracker, &store, &roots, last.as_ref(), seed);
        let target = store.load_manifest(&taken[index].0.id).unwrap();
        assert!(
            target.same_trees(&taken[index].0),
            "seed {seed}: loaded back differently"
        );
        let report = store.restore(&current, &target).unwrap();
        let kept = |rel: &String| {
            report
                .kept_dirs
                .iter()
                .any(|dir| root.join(rel).starts_with(dir))
        };
        for (path, why) in &report.failed {
            // Only a directory still holding ignored files can stand in the way.
            assert!(
                report.kept_dirs.iter().any(|dir| path.starts_with(dir)),
                "seed {seed}: {path:?}: {why}"
            );
        }
        let mut restored = snapshot(&root, false);
        let mut expected = taken[index].1.clone();
        if !git {
            assert!(
                report.kept_dirs.is_empty(),
                "seed {seed}: {:?}",
                report.kept_dirs
            );
        }
        restored.retain(|rel, _| !kept(rel));
        expected.retain(|rel, _| !kept(rel));
        assert_eq!(restored, expected, "seed {seed}, checkpoint {index}");
        let ignored_after = snapshot(&root, true);
        assert_eq!(
            ignored_before, ignored_after,
            "seed {seed}: ignored files changed"
        );
        last = Some(take(&mut tracker, &store, &roots, Some(&current), seed));
    }
    if let Some(head) = git_head {
        assert_eq!(std::fs::read(root.join(".git/HEAD")).unwrap(), head);
    }
}

#[test]
fn restoring_any_checkpoint_gives_back_that_tree_outside_a_repository() {
    for seed in 0..60 {
        run_case(seed, false);
    }
}

#[test]
fn restoring_any_checkpoint_gives_back_that_tree_in_a_repository_leaving_ignored_files() {
    for seed in 1000..1060 {
        run_case(seed, true);
    }
}
