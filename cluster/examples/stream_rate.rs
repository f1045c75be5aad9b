//! Events per second through one thread's stream, as a worker appends them: each append
//! renews the lease with a compare-and-set and waits for JetStream's ack (the fencing every
//! worker append pays), while a follower reads them back in order.
//!
//! Usage: `stream_rate NATS_URL [EVENTS] [PAYLOAD_BYTES]`; prints one JSON line. Used by
//! `bench/cluster_bench.py`.
#![allow(clippy::print_stdout, reason = "an example prints its figure")]

use std::time::Instant;
use troupe_cluster::follow::ThreadFollower;
use troupe_cluster::lease::Lease;
use troupe_cluster::publish::ThreadPublisher;
use troupe_cluster::wire::Kind;
use troupe_cluster::{Cluster, ClusterOptions};
use troupe_config::cluster::ClusterToml;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .ok_or("usage: stream_rate NATS_URL [EVENTS] [PAYLOAD_BYTES]")?;
    let events: u64 = args.next().map_or(Ok(5000), |n| n.parse())?;
    let payload_bytes: usize = args.next().map_or(Ok(200), |n| n.parse())?;
    // The bench runs against a loopback server of its own, without credentials.
    let config = ClusterToml {
        allow_anonymous: Some(true),
        ..ClusterToml::default()
    };
    let options = ClusterOptions::from_config(&config, Some(&url))?;
    let cluster = Cluster::connect(options, "stream-rate").await?;
    let thread = uuid::Uuid::now_v7().to_string();
    let lease = Lease::acquire(
        &cluster.kv,
        &thread,
        "bench",
        std::path::Path::new("/"),
        None,
    )
    .await?;
    let keys = troupe_cluster::sign::ThreadKeys::from_secret(
        &troupe_cluster::sign::ThreadSecret::generate()?,
    );
    let mut publisher = ThreadPublisher::new(&cluster, lease, "bench", (0, 0), keys.clone())?;
    let mut follower = ThreadFollower::new(&cluster, &thread, keys)?;
    let reader = tokio::spawn(async move {
        let mut seen = 0u64;
        while seen < events {
            follower.next().await?;
            seen += 1;
        }
        Ok::<Instant, troupe_cluster::ClusterError>(Instant::now())
    });
    let payload = vec![b'x'; payload_bytes];
    let started = Instant::now();
    for _ in 0..events {
        publisher.append(Kind::Event, payload.clone(), None).await?;
    }
    let published = started.elapsed();
    let followed = reader.await??.duration_since(started);
    publisher.finish().await;
    println!(
        "{{\"events\":{events},\"payload_bytes\":{payload_bytes},\
         \"published_per_s\":{:.0},\"followed_per_s\":{:.0}}}",
        events as f64 / published.as_secs_f64(),
        events as f64 / followed.as_secs_f64()
    );
    Ok(())
}
