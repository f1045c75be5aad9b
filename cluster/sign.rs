//! Who may speak on a thread. The requester makes a secret for each thread it asks for
//! (32 random bytes, sent only in its spawn request, which only workers can read) and two
//! keys are derived from it: the worker's, which signs every message on the thread's
//! subject (events, rollout lines, the end) and every reply to an op, and the
//! requester's, which signs every op (interrupt, input, close, an approval decision). A
//! client of the pool that can see the thread's messages but not the secret can neither
//! forge nor replay either side: each message on the subject signs the sequence of the
//! message before it, each op a fresh nonce with its time.
//!
//! The secret reaches a worker taking the thread over through the workers' own bucket
//! (`secrets.rs`), never through anything a requester can read.

use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};

/// Header carrying a message's signature (lowercase hex HMAC-SHA256).
pub const SIGNATURE_HEADER: &str = "Troupe-Sig";
/// Header of a message on a thread's subject: the sequence of the signed message before
/// it on that subject (0 for the first), signed with it.
pub const PREVIOUS_HEADER: &str = "Troupe-Prev";
/// Header of an op: `<unix ms>-<random>`, signed with it, used once.
pub const NONCE_HEADER: &str = "Troupe-Nonce";

/// A thread's secret (never printed).
#[derive(Clone, PartialEq, Eq)]
pub struct ThreadSecret([u8; 32]);

impl std::fmt::Debug for ThreadSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ThreadSecret(<redacted>)")
    }
}

/// Why a secret could not be made or read.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("the system's random source failed")]
    Random,
    #[error("a thread secret must be 64 hex digits")]
    Malformed,
}

impl ThreadSecret {
    /// A new secret from the system's random source.
    pub fn generate() -> Result<Self, SecretError> {
        let mut bytes = [0u8; 32];
        SystemRandom::new()
            .fill(&mut bytes)
            .map_err(|_| SecretError::Random)?;
        Ok(Self(bytes))
    }

    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    pub fn from_hex(text: &str) -> Result<Self, SecretError> {
        let bytes = unhex(text).ok_or(SecretError::Malformed)?;
        let bytes: [u8; 32] = bytes.try_into().map_err(|_| SecretError::Malformed)?;
        Ok(Self(bytes))
    }
}

/// The two keys of one thread.
#[derive(Clone)]
pub struct ThreadKeys {
    worker: hmac::Key,
    requester: hmac::Key,
}

impl std::fmt::Debug for ThreadKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ThreadKeys(<redacted>)")
    }
}

/// Which side signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Worker,
    Requester,
}

impl ThreadKeys {
    /// Keys apart per side, so a message of one side can never pass for the other's.
    pub fn from_secret(secret: &ThreadSecret) -> Self {
        let root = hmac::Key::new(hmac::HMAC_SHA256, &secret.0);
        let derive = |label: &[u8]| {
            let tag = hmac::sign(&root, label);
            hmac::Key::new(hmac::HMAC_SHA256, tag.as_ref())
        };
        Self {
            worker: derive(b"troupe thread worker v1"),
            requester: derive(b"troupe thread requester v1"),
        }
    }

    fn key(&self, side: Side) -> &hmac::Key {
        match side {
            Side::Worker => &self.worker,
            Side::Requester => &self.requester,
        }
    }

    /// The signature of `fields` by `side`.
    pub fn sign(&self, side: Side, fields: &[&[u8]]) -> String {
        hex(hmac::sign(self.key(side), &framed(fields)).as_ref())
    }

    /// Whether `signature` is `side`'s over `fields` (compared in constant time).
    pub fn verify(&self, side: Side, fields: &[&[u8]], signature: &str) -> bool {
        let Some(tag) = unhex(signature) else {
            return false;
        };
        hmac::verify(self.key(side), &framed(fields), &tag).is_ok()
    }
}

/// Each field with its length first: no two lists of fields frame to the same bytes.
fn framed(fields: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(fields.iter().map(|f| f.len() + 8).sum());
    for field in fields {
        out.extend_from_slice(&(field.len() as u64).to_be_bytes());
        out.extend_from_slice(field);
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// A fresh nonce for an op: its time (the worker refuses old ones) and 16 random bytes.
pub fn new_nonce() -> Result<String, SecretError> {
    let mut bytes = [0u8; 16];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| SecretError::Random)?;
    Ok(format!("{}-{}", crate::now_ms(), hex(&bytes)))
}

/// How old an op's nonce may be (its time is the requester's clock: generous).
pub const NONCE_MAX_AGE_MS: i64 = 120_000;

/// Whether `nonce` was made within [`NONCE_MAX_AGE_MS`] of `now_ms`.
pub fn nonce_is_fresh(nonce: &str, now_ms: i64) -> bool {
    nonce
        .split_once('-')
        .and_then(|(ms, _)| ms.parse::<i64>().ok())
        .is_some_and(|ms| (now_ms - ms).abs() <= NONCE_MAX_AGE_MS)
}

#[cfg(test)]
#[path = "sign_tests.rs"]
mod tests;
