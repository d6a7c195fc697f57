//! # urikey
//!
//! Strict RFC 3986 URI-references turned into canonical keys, and a parallel
//! engine that deduplicates large newline-delimited URL dumps with them.
//!
//! * [`uri`] is the library: a zero-copy strict parser with byte-exact error
//!   positions, an owned component model, reference resolution (§5.2) and
//!   normalization (§6.2) into canonical keys. It never depends on the
//!   engine; with default features off it pulls in no engine or CLI crate.
//! * [`engine`] (feature `engine`) deduplicates whole files on all cores and
//!   offers a streaming seen-set that a caller feeds batch by batch.
//! * The `urikey` command (feature `cli`, on by default) lives in `src/cli/`;
//!   `src/main.rs` and the Python package's `python -m urikey` both run it
//!   through the hidden `cli::main_with_args`, which is not a public API.
//!
//! ## Features
//!
//! | feature | what it adds | crates |
//! | --- | --- | --- |
//! | (none) | [`uri`]: parse, resolve, normalize, key, fingerprint | `idna`, `memchr`, `xxhash-rust` |
//! | `engine` | [`engine`]: file dedup, [`engine::SeenSet`] | `rayon`, `memmap2`, `flate2`, `zstd`, `ahash` |
//! | `cli` (default) | the `urikey` binary | `clap`, `clap_complete`, `clap_mangen`, `anyhow`, `ctrlc`, `indicatif`, `tempfile` |
//!
//! A library user writes `urikey = { version = "…", default-features = false }`
//! (and `features = ["engine"]` for deduplication).
//!
//! ## From a line to a key to the output: which file to open
//!
//! 1. `engine/input.rs`: opens an input (memory map, stream, gzip or zstd).
//! 2. `engine/chunk.rs`: cuts it at newlines into chunks; `engine/lines.rs`
//!    holds the line rules every command shares (BOM, CR, line limit,
//!    `--field`), and the per-line commands' reader.
//! 3. `engine/batch.rs` (phase 1, `scan`): every line to a key and a
//!    fingerprint, through the [`uri::key::Keyer`]:
//!    * `uri/key/config.rs`: the [`uri::key::KeyConfig`] a keyer is built from;
//!    * `uri/key/one_pass.rs` (with `scan.rs`/`simd.rs`): the one-pass tier
//!      for `scheme://host…` lines, which returns the input itself when it is
//!      already canonical;
//!    * `uri/parse.rs` → `uri/normalize.rs` (with `host.rs`, `pct.rs`,
//!      `scheme.rs`, `table.rs`): the general tier; `uri/lenient.rs` maps dirty
//!      input first when asked;
//!    * `uri/surt.rs`, and [`uri::key::fingerprint`]: the other key formats.
//! 4. `engine/shard.rs` + `engine/fpset.rs` (phase 2): the seen-set, 16 shards
//!    of 128-bit fingerprints, filled in input order.
//! 5. `engine/run.rs`: the pipeline and the writer thread (phase 3), which
//!    gathers the selected lines into large writes; `engine/output.rs` makes an
//!    output file appear whole or not at all; `engine/observe.rs` reports
//!    invalid lines and progress to the caller.
//! 6. `engine/memory.rs` + `engine/spill/` (runs past the memory limit):
//!    the limit and the seen-set's budget; partition and lines files
//!    (`files.rs`), their resolution and the final merge (`resolve.rs`).
//! 7. `src/cli/`: the command. `dedup.rs`, `normalize.rs`, `parse.rs`,
//!    `resolve.rs` (one file per command); `output.rs` (stdout or an
//!    `OutputFile`, `-`, Ctrl-C); `report.rs` (stderr that never fails a run,
//!    the capped invalid-line report); `progress.rs` (bar or plain lines);
//!    `generate.rs` (completions and man pages).
//!
//! ## Use it from Rust
//!
//! Canonicalize one URL with a profile and a flag, and fingerprint it:
//!
//! ```
//! use urikey::uri::key::{KeyConfig, KeyScratch};
//!
//! let keyer = "rfc +remove-fragment".parse::<KeyConfig>()?.keyer();
//! let mut scratch = KeyScratch::default();
//! let key = keyer.key(b"HTTP://Example.COM:80/a/./b/%7euser#top", &mut scratch)?;
//! assert_eq!(key.as_str(), "http://example.com/a/b/~user");
//!
//! // Already canonical: the key borrows the input, nothing is copied.
//! assert!(keyer.key(b"http://example.com/", &mut scratch)?.is_input());
//!
//! // The stable 128-bit fingerprint; its hex is what `--key hash` prints.
//! let fp = keyer.fingerprint(b"http://example.com:80/a/b/~user", &mut scratch)?;
//! assert_eq!(fp, urikey::uri::key::fingerprint(b"http://example.com/a/b/~user"));
//!
//! // Bad input is an error with the byte offset and a reason.
//! let err = keyer.key(b"http://exa mple.com/", &mut scratch).unwrap_err();
//! assert_eq!((err.index(), err.reason()), (10, "invalid-host"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Deduplicate lines as they come, batch by batch (feature `engine`):
//!
//! ```
//! # #[cfg(feature = "engine")] {
//! use urikey::engine::{SeenSet, Verdict};
//! use urikey::uri::key::KeyConfig;
//!
//! let mut seen = SeenSet::new(KeyConfig::default().keyer());
//! let verdicts = seen.add(&[Some("http://a.example/x"), Some("HTTP://A.example:80/x")]).unwrap();
//! assert_eq!(verdicts, [Verdict::New, Verdict::Duplicate]);
//! let verdicts = seen.add(&[Some("http://a.example/x#f"), None, Some("http://b.example/ ")]).unwrap();
//! assert_eq!(verdicts[0], Verdict::New); // `rfc` keeps fragments
//! assert_eq!(verdicts[1], Verdict::Null);
//! assert!(matches!(verdicts[2], Verdict::Invalid(_)));
//! # }
//! ```
//!
//! Deduplicate a whole file (or several, as one stream), as `urikey dedup`
//! does (feature `engine`):
//!
//! ```
//! # #[cfg(feature = "engine")] {
//! use std::sync::Arc;
//! use urikey::engine::{self, Config, Input};
//! use urikey::uri::key::KeyConfig;
//!
//! let config = Config::new("crawl".parse::<KeyConfig>()?.keyer());
//! let dump: Arc<[u8]> = Arc::from(&b"http://a.example/#x\nhttp://A.example/\nnot a url\n"[..]);
//! let mut out = Vec::new();
//! let mut invalid = Vec::new();
//! let stats = engine::run(
//!     &config,
//!     vec![Input::Bytes { name: "dump".into(), bytes: dump }], // or Input::Path(..)
//!     &mut out,
//!     &mut |line: &engine::InvalidLine<'_>| invalid.push(line.to_string()),
//! )?;
//! assert_eq!(out, b"http://a.example/\n");
//! assert_eq!((stats.unique, stats.duplicates, stats.invalid), (1, 1, 1));
//! assert_eq!(invalid, ["dump:3: byte 41: invalid character in path"]); // offset in the input
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

// The command's modules name the library `urikey::...`, as the binary did.
#[cfg(feature = "cli")]
extern crate self as urikey;

#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
#[cfg(feature = "engine")]
pub mod engine;
pub mod uri;

/// The README's Rust examples, compiled and run as doctests.
#[cfg(all(doctest, feature = "engine"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
