//! An open-addressing table of fingerprints, 12.8 bytes a slot.
//!
//! # Layout
//!
//! The table is an array of buckets, one 64-byte cache line each: a 4-byte
//! header, then five 12-byte slots. A slot holds bits 0..96 of a
//! fingerprint; the header holds the number of taken slots (3 bits), an
//! overflow bit, and bits 96..101 of each slot's fingerprint (5 bits a
//! slot). So a table tells fingerprints apart by their low 101 bits. Its
//! callers put into one table only fingerprints whose top bits agree (the
//! engine's shard: 4 bits; a spilled partition: 12), so the position of a
//! table implies those: two keys are merged only if 105 of their 128
//! fingerprint bits agree. The engine's collision bound follows from that
//! (see the crate's engine docs): about `n² / 2¹⁰⁶` for `n` distinct keys.
//!
//! # Probing
//!
//! A fingerprint has two buckets. Its home is its low 64 bits read as a
//! fraction of the bucket count (XXH3 bits are uniform already, and the
//! order of the buckets follows the order of those bits, which the
//! in-place growth below relies on). Its second bucket is another one of
//! the home's group of 64 buckets (4 KiB, one small page), chosen by bits
//! 64..96. An insert takes the emptier of the two. Only when both are full
//! does it take the first bucket after the home that has a free slot, and
//! set the overflow bit of every full bucket it passed (the home first). A
//! lookup reads the home and the second bucket, both prefetched, and goes
//! on past the home only while the overflow bit is set.
//!
//! The second bucket halves the buckets an absent key reads at 87.5 %
//! load (linear probing alone reads 6; simulated). It stays in the home's
//! group so that a rebuild in place (see `rebuild.rs`) moves entries only
//! a short way.
//!
//! # Growth and memory
//!
//! A table grows before more than 87.5 % of its slots are taken. Below one
//! 2 MiB huge page it grows fourfold; from there on by about 1.3 in whole
//! huge pages. Each table's sizes are shifted by its `phase` (the engine
//! gives each of its 16 shards another one), so the shards, which fill up
//! at the same pace, do not all grow at the same moment: from 8 M keys on,
//! 16 such tables take 16.7 bytes per fingerprint on average over sizes
//! and 18.7 at most (a single table: 14.6 to 19). Larger steps cost
//! fewer rebuilds but, at the worst sizes, more than the engine's 20 bytes
//! a key. Tables from
//! one huge page on grow in place inside a reserved range of address
//! space, without a second copy of their entries (see
//! `FingerprintTable::grow`).
//!
//! A table that is told how many fingerprints to expect
//! ([`FingerprintTable::expect_total`]; the engine projects it from the input's
//! size) skips the sizes between: its next growth goes to the first size
//! that holds them all.
//!
//! Buckets are prefetched a few inserts ahead
//! ([`FingerprintTable::insert_all`]): the inserts are bound by memory
//! latency, not by the CPU.
//!
//! # Files
//!
//! * `bucket.rs`: the bucket layout (`Bucket`, a read view) and
//!   the probe;
//! * `memory.rs`: the backing memory (heap, or an anonymous map with huge
//!   pages, faulted in at once, with room to grow in place);
//! * `table.rs`: [`FingerprintTable`], the API the engine uses;
//! * `rebuild.rs`: moving every entry when a table grows in place.

mod bucket;
mod memory;
mod rebuild;
mod table;
#[cfg(test)]
mod tests;

pub use rebuild::REBUILD_ASIDE_BYTES;
pub use table::{FingerprintTable, Insert, AHEAD};
