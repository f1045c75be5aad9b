//! The workers' bucket of thread secrets (`TROUPE_<pool>_SECRETS`, key `thread.<id>`): how
//! a worker taking a thread over gets the secret its requester sent to the first worker.
//! Only workers touch it; the pool's NATS permissions keep requesters (and anyone else)
//! from reading it, as they keep them from reading the spawn queue (docs/scale-out.md).

use crate::layout::{check_token, Layout};
use crate::sign::ThreadSecret;
use crate::{Cluster, ClusterError};
use async_nats::jetstream::{self, kv::Store};

/// The bucket, created when missing (by a worker: requesters have no access to it).
pub async fn bucket(cluster: &Cluster) -> Result<Store, ClusterError> {
    let name = secrets_bucket(cluster.layout());
    match cluster.js.get_key_value(name.clone()).await {
        Ok(kv) => Ok(kv),
        Err(_) => cluster
            .js
            .create_key_value(jetstream::kv::Config {
                bucket: name.clone(),
                history: 1,
                storage: jetstream::stream::StorageType::File,
                ..Default::default()
            })
            .await
            .map_err(|err| ClusterError::js(format!("bucket {name}"), err)),
    }
}

/// The bucket's name for `layout`'s pool.
pub fn secrets_bucket(layout: &Layout) -> String {
    format!("{}_SECRETS", layout.bucket())
}

fn key(thread: &str) -> Result<String, ClusterError> {
    check_token(thread)?;
    Ok(format!("thread.{thread}"))
}

/// Keeps `thread`'s secret for the workers that may take it over.
pub async fn put(store: &Store, thread: &str, secret: &ThreadSecret) -> Result<(), ClusterError> {
    store
        .put(key(thread)?, secret.to_hex().into_bytes().into())
        .await
        .map(drop)
        .map_err(|err| ClusterError::js("thread secret", err))
}

/// `thread`'s secret; `None` when none was kept (not a thread of this pool's workers).
pub async fn get(store: &Store, thread: &str) -> Result<Option<ThreadSecret>, ClusterError> {
    let value = store
        .get(key(thread)?)
        .await
        .map_err(|err| ClusterError::js("thread secret", err))?;
    Ok(value.and_then(|bytes| {
        std::str::from_utf8(&bytes)
            .ok()
            .and_then(|text| ThreadSecret::from_hex(text).ok())
    }))
}

/// The thread is over: its secret goes.
pub async fn forget(store: &Store, thread: &str) {
    if let Ok(key) = key(thread) {
        let _ = store.purge(key).await;
    }
}
