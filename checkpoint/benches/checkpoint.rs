//! Checkpoint costs on a 10,000-file tree: an unchanged turn, a turn that changed 10
//! files (through a `Tracker`, as a session takes them), and rewinding 100 changed files (a
//! full walk: `troupe rewind` runs in a process of its own). Then the store's growth per
//! turn against the bytes the turn changed. Run with `cargo bench -p troupe-checkpoint`.
#![allow(
    clippy::print_stdout,
    reason = "a benchmark or example prints its figures"
)]

use criterion::{criterion_group, criterion_main, Criterion};
use std::path::{Path, PathBuf};
use troupe_checkpoint::{Manifest, Options, Store, Tracker};

const FILES: usize = 10_000;

fn tree(root: &Path) {
    for i in 0..FILES {
        let dir = root.join(format!("d{}", i / 100));
        std::fs::create_dir_all(&dir).unwrap_or(());
        std::fs::write(
            dir.join(format!("f{i}.txt")),
            format!("line {i}\n").repeat(20),
        )
        .unwrap_or(());
    }
}

fn options() -> Options {
    Options {
        max_dir_bytes: u64::MAX,
        max_root_bytes: u64::MAX,
        exclude: Vec::new(),
        keep: true,
    }
}

fn setup() -> Option<(tempfile::TempDir, PathBuf, Store, Manifest)> {
    let work = tempfile::tempdir().ok()?;
    let root = std::fs::canonicalize(work.path()).ok()?.join("tree");
    std::fs::create_dir(&root).ok()?;
    tree(&root);
    let store = Store::open(&work.path().join("store")).ok()?;
    // Past the racy window, so the stat cache vouches for every file.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let first = store
        .take(std::slice::from_ref(&root), None, &options())
        .ok()?;
    store.write_manifest(&first).ok()?;
    Some((work, root, store, first))
}

fn bench(c: &mut Criterion) {
    let Some((work, root, store, first)) = setup() else {
        return;
    };
    let roots = vec![root.clone()];
    let mut tracker = Tracker::new(options(), true);
    println!("tracker watching: {}", tracker.watching());
    c.bench_function("unchanged 10k-file tree", |b| {
        b.iter(|| tracker.take(&store, &roots, Some(&first)));
    });
    let mut round = 0u64;
    let mut last = first.clone();
    c.bench_function("10 changed files of 10k, manifest written", |b| {
        b.iter(|| {
            round += 1;
            for i in 0..10 {
                let path = root.join(format!("d{}/f{}.txt", i, i * 100));
                std::fs::write(path, format!("round {round}\n")).unwrap_or(());
            }
            if let Ok(mut next) = tracker.take(&store, &roots, Some(&last)) {
                let _ = store.write_manifest_over(&mut next, Some(&last));
                last = next;
            }
        });
    });
    storage(&root, &store, &mut tracker, last);
    c.bench_function("rewind of 100 changed files", |b| {
        b.iter(|| {
            for i in 0..100 {
                let path = root.join(format!("d{}/f{}.txt", i % 100, (i % 100) * 100 + 1));
                std::fs::write(path, "changed\n").unwrap_or(());
            }
            if let Ok(current) = store.take(&roots, Some(&first), &options()) {
                let _ = store.restore(&current, &first);
            }
        });
    });
    drop(work);
}

/// 20 turns each rewriting 10 files with 4 KiB of new content (a typical source file):
/// how much the store grows per turn against the bytes those files now hold.
fn storage(root: &Path, store: &Store, tracker: &mut Tracker, mut last: Manifest) {
    let roots = vec![root.to_path_buf()];
    let before = dir_bytes(store.dir());
    let mut changed = 0u64;
    for turn in 0..20u64 {
        for i in 0..10u64 {
            let content: String = (0..64)
                .map(|line| format!("turn {turn:4} file {i:2} line {line:3} {:>30}\n", "x"))
                .collect();
            changed += content.len() as u64;
            let path = root.join(format!("d{}/f{}.txt", 10 + i, (10 + i) * 100));
            std::fs::write(path, content).unwrap_or(());
        }
        if let Ok(mut next) = tracker.take(store, &roots, Some(&last)) {
            let _ = store.write_manifest_over(&mut next, Some(&last));
            last = next;
        }
    }
    let grown = dir_bytes(store.dir()).saturating_sub(before);
    println!(
        "storage: 20 turns x 10 changed files: {changed} bytes changed, store grew {grown} bytes ({:.2}x)",
        grown as f64 / changed as f64
    );
}

/// The bytes of every file under `dir` (their lengths, as `du --apparent-size`).
fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            Ok(_) => e.metadata().map_or(0, |m| m.len()),
            Err(_) => 0,
        })
        .sum()
}

criterion_group!(benches, bench);
criterion_main!(benches);
