//! The dedup engine (in progress).
