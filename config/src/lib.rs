//! Config loading (being written).
