//! Checkpoint costs on a 10,000-file tree: an unchanged turn, a turn that changed 10
//! files, and rewinding 100 changed files. Run with `cargo bench -p troupe-checkpoint`.
#![allow(
    clippy::print_stdout,
    reason = "a benchmark or example prints its figures"
)]

use criterion::{criterion_group, criterion_main, Criterion};
use std::path::{Path, PathBuf};
use troupe_checkpoint::{Manifest, Options, Store};

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
    let Some((_work, root, store, first)) = setup() else {
        return;
    };
    let roots = vec![root.clone()];
    c.bench_function("unchanged 10k-file tree", |b| {
        b.iter(|| store.take(&roots, Some(&first), &options()));
    });
    let mut round = 0u64;
    c.bench_function("10 changed files of 10k, manifest written", |b| {
        b.iter(|| {
            round += 1;
            for i in 0..10 {
                let path = root.join(format!("d{}/f{}.txt", i, i * 100));
                std::fs::write(path, format!("round {round}\n")).unwrap_or(());
            }
            if let Ok(next) = store.take(&roots, Some(&first), &options()) {
                let _ = store.write_manifest(&next);
            }
        });
    });
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
}

criterion_group!(benches, bench);
criterion_main!(benches);
