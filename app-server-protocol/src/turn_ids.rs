//! Wire turn ids: UUIDv7s, as Codex's, that map one to one to the runtime's turn numbers
//! (which the rollout records). A turn's id is its thread's id (itself a UUIDv7: creation
//! time and random bits) with the turn number XORed into its low 32 random bits, so it is the
//! same in every process and after every reload, distinct across threads, and turned back
//! into the number given the thread id alone.

use troupe_messages::ids::TurnId;
use uuid::Uuid;

/// The bits a turn number may change: the low 32 of the UUIDv7's random `rand_b` (version
/// and variant bits stay untouched; the 30 random bits above still tell threads apart).
const TURN_BITS: u128 = (1 << 32) - 1;

/// A thread id that is not a UUID (tests use short names) gets this base.
const FALLBACK_BASE: u128 = 0x0000_0000_0000_7000_8000_0000_0000_0000;

fn base(thread_id: &str) -> u128 {
    Uuid::parse_str(thread_id)
        .map(|id| id.as_u128())
        .unwrap_or(FALLBACK_BASE)
}

/// The wire id of `turn` of `thread_id`.
pub fn turn_wire_id(thread_id: &str, turn: TurnId) -> String {
    let number = u128::from(turn.0) & TURN_BITS;
    Uuid::from_u128(base(thread_id) ^ number).to_string()
}

/// The runtime's turn number of a wire turn id of `thread_id`; none for an id that is not
/// one of that thread's.
pub fn parse_turn_id(thread_id: &str, wire: &str) -> Option<TurnId> {
    let diff = Uuid::parse_str(wire).ok()?.as_u128() ^ base(thread_id);
    (diff != 0 && diff & !TURN_BITS == 0).then_some(TurnId(diff as u64))
}
