//! The integration tests: one binary, one module per area.
//!
//! Where a new test goes:
//! * the library alone (no engine, no command): `conformance.rs` (the
//!   shared vectors in `tests/conformance/`), `compat.rs` (the compat
//!   presets), `props.rs` (properties of parsing, resolution and keys);
//! * `urikey dedup`: `dedup/cli.rs` (options, inputs, outputs, failures),
//!   `dedup/props.rs` (the engine against a naive reference),
//!   `dedup/spill.rs` (runs larger than memory);
//! * `urikey normalize` and the keys it prints: `normalize/`;
//!   keys that must never change: `stable_keys.rs`;
//! * `urikey parse` and `urikey resolve`: `cli.rs`;
//! * the docs' `console` examples, run as written: `doc_examples.rs`;
//! * seen-stores (`dedup --state`, `urikey state`, `engine::store`):
//!   `state.rs`; power loss inside real commits (traced with strace,
//!   replayed as crash states): `state_crash/`;
//! * Redis seen-sets (`engine::redis`, `dedup --state redis://`, `urikey
//!   state` on a URL), against real redis-servers: `redis.rs`;
//! * output files and streams of every command: `output.rs`;
//! * crawl formats (CDXJ, CDX, WARC, WAT, Parquet, multi-member gzip):
//!   `formats.rs`; that every format is named in help, stub and docs:
//!   `format_list.rs`;
//! * the repository's own rules (docs name paths that exist, the README's
//!   and the source files' length caps, the number of result folders):
//!   `repo.rs`;
//! * the engine's rooms and the way they import each other: `rooms.rs`.
//!
//! Helpers shared by several modules (running the binary, temporary files,
//! the conformance vectors) are in `common.rs`. Tests that need the
//! `urikey` binary build only with the `cli` feature. Allocation counting
//! needs its own global allocator, so it is a binary of its own
//! (`tests/no_alloc.rs`).

mod common;

mod compat;
mod conformance;
mod props;
mod repo;
#[cfg(feature = "engine")]
mod rooms;

#[cfg(feature = "cli")]
mod cli;
#[cfg(feature = "cli")]
mod dedup;
#[cfg(feature = "cli")]
mod doc_examples;
#[cfg(feature = "cli")]
mod format_list;
#[cfg(feature = "cli")]
mod formats;
#[cfg(feature = "cli")]
mod normalize;
#[cfg(feature = "cli")]
mod output;
#[cfg(feature = "cli")]
mod redis;
#[cfg(feature = "cli")]
mod stable_keys;
#[cfg(feature = "cli")]
mod state;
#[cfg(feature = "cli")]
mod state_crash;
#[cfg(feature = "cli")]
mod state_format;
#[cfg(feature = "cli")]
mod state_messages;
