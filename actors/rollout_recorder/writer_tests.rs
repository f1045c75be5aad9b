#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use pretty_assertions::assert_eq;
use std::path::Path;
use std::time::Duration;

fn append(path: &Path) -> File {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
}

async fn synced(writer: &FileWriter) -> Result<(), String> {
    let (tx, rx) = oneshot::channel();
    writer.sync(tx).unwrap();
    rx.await.unwrap()
}

fn lines(file: usize, count: usize) -> Vec<String> {
    (0..count)
        .map(|i| format!("file {file} line {i}\n"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_files_on_two_workers_keep_each_file_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let pool = RolloutWriter::new(2);
    let tasks: Vec<_> = (0..12)
        .map(|n| {
            let path = dir.path().join(format!("{n}.jsonl"));
            let writer = pool.open(path.clone(), append(&path));
            tokio::spawn(async move {
                for (i, line) in lines(n, 500).into_iter().enumerate() {
                    writer.write(line.into_bytes()).unwrap();
                    if i % 50 == 0 {
                        synced(&writer).await.unwrap();
                    }
                }
                synced(&writer).await.unwrap();
                (n, path)
            })
        })
        .collect();
    for task in tasks {
        let (n, path) = task.await.unwrap();
        assert_eq!(
            std::fs::read_to_string(path).unwrap(),
            lines(n, 500).concat()
        );
    }
}

#[tokio::test]
async fn a_sync_is_answered_after_everything_queued_before_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.jsonl");
    let pool = RolloutWriter::new(1);
    let writer = pool.open(path.clone(), append(&path));
    for line in lines(0, 1000) {
        writer.write(line.into_bytes()).unwrap();
    }
    synced(&writer).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        lines(0, 1000).concat()
    );
}

#[tokio::test]
async fn finish_drains_and_closes_and_later_writes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.jsonl");
    let pool = RolloutWriter::new(1);
    let mut writer = pool.open(path.clone(), append(&path));
    for line in lines(0, 100) {
        writer.write(line.into_bytes()).unwrap();
    }
    writer.finish().await;
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        lines(0, 100).concat()
    );
    assert!(matches!(
        writer.write(b"late\n".to_vec()),
        Err(WriterError::Closed(p)) if p == path
    ));
    // Finishing twice answers at once.
    writer.finish().await;
}

#[tokio::test]
async fn a_dropped_writer_still_writes_what_was_queued() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    // One worker takes files in the order they got work: the dropped file's close is done
    // before the second file's sync is answered.
    let pool = RolloutWriter::new(1);
    let dropped = pool.open(first.clone(), append(&first));
    let other = pool.open(second.clone(), append(&second));
    for line in lines(0, 100) {
        dropped.write(line.into_bytes()).unwrap();
    }
    drop(dropped);
    other.write(b"x\n".to_vec()).unwrap();
    synced(&other).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(&first).unwrap(),
        lines(0, 100).concat()
    );
}

#[tokio::test]
async fn a_write_error_sticks_and_fails_every_later_sync() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.jsonl");
    std::fs::write(&path, "").unwrap();
    let pool = RolloutWriter::new(1);
    // Opened read-only: every write fails.
    let writer = pool.open(path.clone(), File::open(&path).unwrap());
    writer.write(b"one\n".to_vec()).unwrap();
    let first = synced(&writer).await.unwrap_err();
    assert!(
        first.contains("writing") && first.contains("a.jsonl"),
        "{first}"
    );
    writer.write(b"two\n".to_vec()).unwrap();
    assert_eq!(synced(&writer).await.unwrap_err(), first);
}

#[tokio::test]
async fn the_workers_stop_when_the_last_handle_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.jsonl");
    let pool = RolloutWriter::new(2);
    let weak = Arc::downgrade(&pool.owner.pool);
    let mut writer = pool.open(path.clone(), append(&path));
    drop(pool);
    writer.write(b"last\n".to_vec()).unwrap();
    writer.finish().await;
    drop(writer);
    // Each worker holds the pool until it returns; join them through the strong count.
    while weak.strong_count() > 0 {
        std::thread::yield_now();
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "last\n");
}

#[tokio::test]
async fn idle_workers_leave_so_an_idle_file_costs_no_thread() {
    let dir = tempfile::tempdir().unwrap();
    let pool = RolloutWriter::with_keep_alive(4, Duration::from_millis(20));
    let writers: Vec<FileWriter> = (0..8)
        .map(|n| {
            let path = dir.path().join(format!("{n}.jsonl"));
            pool.open(path.clone(), append(&path))
        })
        .collect();
    for writer in &writers {
        writer.write(b"line\n".to_vec()).unwrap();
        synced(writer).await.unwrap();
    }
    let workers = || lock(&pool.owner.pool.ready).workers;
    // The files stay open; the workers leave once they have had nothing to do.
    while workers() > 0 {
        tokio::task::yield_now().await;
    }
    // New work starts a worker again.
    writers[0].write(b"again\n".to_vec()).unwrap();
    synced(&writers[0]).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("0.jsonl")).unwrap(),
        "line\nagain\n"
    );
}

#[tokio::test]
async fn a_failed_write_leaves_only_whole_lines_and_is_told_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.jsonl");
    std::fs::write(&path, "zero\n").unwrap();
    let pool = RolloutWriter::new(1);
    // /dev/full takes nothing: a write fails with ENOSPC, as on a full disk.
    let full = std::fs::OpenOptions::new()
        .append(true)
        .open("/dev/full")
        .unwrap();
    let writer = pool.open(path.clone(), full);
    let told = writer.on_failure();
    writer.write(b"one\n".to_vec()).unwrap();
    let failure = told.await.unwrap();
    assert!(failure.contains("no space left"), "{failure}");
    assert_eq!(synced(&writer).await.unwrap_err(), failure);
    // A receiver asked for after the failure hears of it too.
    assert_eq!(writer.on_failure().await.unwrap(), failure);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "zero\n");
}
