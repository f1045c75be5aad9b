//! Actors (being written).
