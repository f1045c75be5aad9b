//! `[cluster]`: how this machine reaches the NATS JetStream server of a worker pool
//! (`troupe worker`, `troupe exec --remote`, `spawn_agent {placement}`). The type lives in
//! `troupe-messages` (a thread's settings carry it to `spawn_agent`); checked and used by
//! `troupe-cluster`.

pub use troupe_messages::cluster::{ClusterConfig as ClusterToml, GitRemote, Placement, Workspace};
