//! Scale-out over NATS JetStream (a subsystem, not an actor: ractor stays inside each
//! process, NATS is only between processes).
//!
//! Layout of one pool (`[cluster] pool`, default `default`), see `layout.rs`:
//! - stream `TROUPE_<pool>_SPAWN`, work-queue retention, subject `troupe.<pool>.spawn`: spawn
//!   requests, each taken by exactly one worker;
//! - stream `TROUPE_<pool>_THREADS`, subjects `troupe.<pool>.thread.*.events`: per thread,
//!   every event and every rollout line its worker produced, in order, each with its stream
//!   sequence number (a follower resumes from the last one it saw);
//! - key-value bucket `TROUPE_<pool>`: `lease.<thread>` (who runs a thread; its revision
//!   fences every append), `worker.<id>` (heartbeat, free slots), `spawn.<request>` (which
//!   thread a request became);
//! - core subject `troupe.<pool>.thread.<id>.ops`: request/reply to the thread's worker
//!   (interrupt, a sub-agent's input, close, an approval decision).
//!
//! A follower mirrors a thread's rollout lines under its own `TROUPE_HOME` (`mirror.rs`).

pub mod anonymous;
pub mod connect;
pub mod error;
pub mod follow;
pub mod layout;
pub mod lease;
pub mod mirror;
pub mod publish;
pub mod secrets;
pub mod sign;
pub mod spawn;
pub mod tls;
pub mod wire;

pub use connect::{Cluster, ClusterOptions};
pub use error::ClusterError;

/// Milliseconds since the Unix epoch (spawn deadlines, heartbeats).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
