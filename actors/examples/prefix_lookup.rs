//! Figures for issue #13: finding a thread by an id prefix among 1,000 threads, through the
//! index (`ops::find` with the store: a sled prefix scan) and through the files (`ops::find`
//! without it: the walk over every rollout file that a prefix always took before).
//!
//! `cargo run -p troupe-actors --example prefix_lookup [THREADS] [LOOKUPS]`
//! (defaults 1,000 and 200). Prints the median and the mean of each.
#![allow(
    clippy::print_stdout,
    reason = "a benchmark or example prints its figures"
)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};
use troupe_actors::rollout_recorder::encode;
use troupe_actors::thread_store::{ops, reconcile, ThreadStore};
use troupe_messages::ids::ThreadId;
use troupe_messages::items::ResponseItem;
use troupe_messages::rollout::{RolloutLine, RolloutRecord, SessionMeta, ROLLOUT_FORMAT_VERSION};

fn write_thread(home: &std::path::Path, n: usize) -> ThreadId {
    let id = ThreadId::new();
    let at = "2026-01-01T00:00:00.000Z".to_string();
    let line = |record| RolloutLine {
        timestamp: at.clone(),
        record,
    };
    let mut lines = vec![line(RolloutRecord::SessionMeta(SessionMeta {
        version: ROLLOUT_FORMAT_VERSION,
        thread_id: id,
        parent_thread_id: None,
        forked_at_turn: None,
        cwd: "/w".into(),
        model: "m".into(),
        model_provider: "p".into(),
        instructions_digest: None,
        cli_version: "0.1.0".into(),
        created_at: at.clone(),
        git: None,
        agent: None,
    }))];
    for k in 0..20 {
        lines.push(line(RolloutRecord::ResponseItem(ResponseItem::user_text(
            format!("thread {n} message {k}"),
        ))));
    }
    let dir = home.join("sessions/2026/01/01");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("rollout-2026-01-01T00-00-00-{id}.jsonl"));
    std::fs::write(path, encode(&lines).unwrap()).unwrap();
    id
}

fn unique_prefix(id: &str, all: &[String]) -> String {
    (8..=id.len())
        .map(|n| &id[..n])
        .find(|p| all.iter().filter(|other| other.starts_with(p)).count() == 1)
        .unwrap_or(id)
        .to_string()
}

fn summary(name: &str, mut times: Vec<Duration>) {
    times.sort();
    let mean = times.iter().sum::<Duration>() / times.len() as u32;
    println!(
        "{name}: median {:?}, mean {mean:?} over {} lookups",
        times[times.len() / 2],
        times.len()
    );
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let threads = args.first().copied().unwrap_or(1000);
    let lookups = args.get(1).copied().unwrap_or(200);
    let home = tempfile::tempdir().unwrap();
    let ids: Vec<String> = (0..threads)
        .map(|n| write_thread(home.path(), n).to_string())
        .collect();
    let store = ThreadStore::open(home.path()).unwrap();
    reconcile::reconcile(&store, home.path()).unwrap();
    let prefixes: Vec<String> = (0..lookups)
        .map(|k| unique_prefix(&ids[k * 97 % ids.len()], &ids))
        .collect();
    let time = |store: Option<&ThreadStore>| -> Vec<Duration> {
        prefixes
            .iter()
            .map(|prefix| {
                let start = Instant::now();
                let found = ops::find(home.path(), store, prefix).unwrap();
                let took = start.elapsed();
                assert!(found.id.to_string().starts_with(prefix.as_str()));
                took
            })
            .collect()
    };
    println!("{threads} threads, prefixes of {}..{} characters", 8, 36);
    summary("index (sled scan_prefix)", time(Some(&store)));
    summary(
        "files (walk every rollout, as every prefix did before)",
        time(None),
    );
}
