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
//! ## Which file to open
//!
//! Paths are relative to the crate's src folder; a test (`crate_map_names_files_that_exist`)
//! checks that every path named here exists.
//!
//! **A line's way through `urikey dedup`**, room by room (the engine's
//! rooms import only the rooms before them on this way; a test,
//! `engine_rooms_import_only_the_rooms_before_them`, holds them to it):
//!
//! 1. *Bytes in*, `engine/input/`: `engine/input/source.rs` opens an input
//!    (a memory map when the caller chose [`engine::MmapChoice::auto`],
//!    else a stream) and `engine/input/compression.rs` recognises gzip,
//!    zstd, xz and bzip2 by their magic bytes. Multi-member gzip decodes
//!    on the run's threads (`engine/input/ordered.rs`, the decoder pool
//!    Parquet shares): a mapped file in `engine/input/gzip.rs`, a pipe a
//!    window at a time in `engine/input/gzip_pipe.rs`, each member by
//!    libdeflate in `engine/input/inflate.rs` when it can; buffers come
//!    from and go back to `engine/input/bytes.rs`.
//!    `engine/input/formats/open.rs` opens an input in its format
//!    (`engine/input/formats/detect.rs` recognises it) and gives its
//!    reader (`engine/input/formats/reader.rs`).
//! 2. `engine/pipeline/reader.rs` cuts what the reader gives into chunks of
//!    lines (`engine/input/chunk.rs`, `engine/input/newlines.rs`; the
//!    decoded segments of a mapped gzip file without a copy in
//!    `engine/input/blocks.rs`; the lines a record format writes in
//!    `engine/input/formats/record_lines.rs`) and hands them over a batch
//!    at a time; `engine/input/lines.rs` holds the line rules every
//!    command shares (BOM, CR, line limit, `--field`).
//! 3. *Keys and their insertion*, `engine/batch/`: `engine/pipeline/driver.rs`
//!    runs the phases of each batch: phase 1 (`engine/batch/scan.rs`)
//!    turns every line into a key and a fingerprint with the
//!    [`uri::key::Keyer`]; phase 2 (`engine/batch/insert.rs`) inserts the
//!    fingerprints into the *seen-set* (`engine/seen/`): 16 shards
//!    (`engine/seen/shard.rs`) of fingerprint tables
//!    (`engine/seen/fpset/`), in input order; it also keeps the memory
//!    budget (`engine/memory.rs`) and switches to spilling past it
//!    (`engine/spill/`: partition and lines files, resolution, final
//!    merge). With a seen-store, the keys a run sees first are sorted by
//!    `engine/seen/fp_sort.rs` before the store is asked about them.
//! 4. *Bytes out*, `engine/output/`: `engine/pipeline/writer.rs` writes the
//!    selected lines of each batch in order (phase 3,
//!    `engine/batch/emit.rs`); `engine/output/file.rs` makes an output
//!    file appear whole or not at all; `engine/observe.rs` reports
//!    invalid lines and progress to the caller.
//!
//! **Across runs** (`dedup --state`): `engine/prior.rs` is the hook a run
//! consults for every key it sees first (in phase 2, and when a spilled
//! run resolves a partition); `engine/store/` is the seen-store behind it:
//! `engine/store/mod.rs` (open, commit, compact, merge), run files
//! (`engine/store/run_file.rs`), batch lookups on all threads
//! (`engine/store/lookup.rs`), the manifest and its atomic replacement
//! (`engine/store/manifest.rs`), the writer lock (`engine/store/lock.rs`),
//! the new keys waiting for a commit (`engine/store/additions.rs`), merging
//! run files (`engine/store/compact.rs`), `engine/store/verify.rs`;
//! `engine/batched_store.rs` feeds a store batch after batch (Python's
//! `SeenStore`); the commands
//! are in `cli/state.rs`, the Parquet export in `cli/export_parquet.rs`.
//!
//! **Batches of separate lines** (not a file): `engine/line_keys.rs` keys
//! them on all cores, for the streaming seen-set ([`engine::SeenSet`],
//! `engine/seen/mod.rs`) and for the Python package's batch calls
//! (`python/src/keys.rs` hands its runs back to the thread holding the
//! GIL).
//!
//! **The key of a line** (`uri/key/`): `uri/key/config.rs` is the
//! [`uri::key::KeyConfig`] a keyer is built from; `uri/key/mod.rs` tries
//! three tiers in turn: the mask tier (`uri/key/fast/masks.rs`, with
//! `uri/key/fast/avx512.rs`), the fast tier (`uri/key/fast/mod.rs`, with
//! the scanners `uri/key/fast/scalar.rs` and `uri/key/fast/avx2.rs`) and
//! the general tier: the strict parser (`uri/parse.rs`) and the normalizer
//! (`uri/normalize/mod.rs`; hosts `uri/host.rs`, escapes `uri/pct.rs`,
//! scheme rules `uri/scheme.rs`, byte classes `uri/table.rs`).
//! `uri/lenient.rs` maps dirty input first when asked; `uri/surt.rs` and
//! [`uri::key::fingerprint`] are the other key formats; `uri/compat/` holds
//! the presets that reproduce other tools' keys byte for byte.
//!
//! **Where a change goes:**
//!
//! * a new normalization flag: `uri/normalize/flags.rs` (its name and
//!   section of RFC 3986), `uri/normalize/mod.rs` (the general tier), and
//!   the fast tier's `FAST_SAFE` list in `uri/key/mod.rs` if the fast tier
//!   applies it too;
//! * a new key format: `uri/key/config.rs` (`KeyFormat`) and `write_key`
//!   in `uri/key/mod.rs`;
//! * a new input format: a file in `engine/input/formats/` (a
//!   `RecordSource` for a record format, `engine/input/formats/reader.rs`),
//!   its name in `Format` (`engine/input/formats/mod.rs`), its reader in
//!   `engine/input/formats/open.rs` and its detection in
//!   `engine/input/formats/detect.rs`; then the docs and tests the
//!   `format_list` test asks for. CDXJ's fast JSON check, without a
//!   parser, is `engine/input/formats/cdxj_fast.rs`. A new compression:
//!   `engine/input/compression.rs`;
//! * a new command or option: `cli/` (one file per command: `cli/dedup.rs`,
//!   `cli/normalize.rs`, `cli/parse.rs`, `cli/resolve.rs`; options shared by
//!   `normalize` and `dedup` in `cli/normalize_opts.rs`);
//! * a new Python batch method: `python/src/canonicalizer.rs` (outside
//!   the src folder: the Python package is its own crate in `python/`).
//!
//! **Glossary.** A *key* is the canonical form of a line (a URI, its SURT,
//! or the hex of its fingerprint). A *fingerprint* is the 128-bit XXH3 of
//! the `uri` key. The *seen-set* holds the fingerprints (or, with
//! `--exact`, the keys) seen so far. A *shard* is one of its 16 parts,
//! chosen by a fingerprint's top 4 bits, so that the workers insert into
//! different shards at once. A *chunk* is a piece of input (768 KiB by
//! default) that ends after a newline; a *batch* is the group of chunks
//! (four per thread, at least eight) that goes through the phases
//! together. A *run* is one `dedup` over its inputs ([`engine::run()`]);
//! its code is the *pipeline* (`engine/pipeline/`). A run past its memory
//! budget *spills*: its lines go to partition files, and with `--count`
//! each partition yields a *count file* of `(sequence, count)` pairs. A
//! *seen-store* is a directory of *run files* (`run-<commit>-<n>.ukr`:
//! immutable sorted fingerprints, `engine/store/run_file.rs`; the word
//! is the on-disk format's, and always comes as "run file") listed by its
//! *manifest*; the *additions* are the keys waiting for the next *commit*,
//! which writes them as a run file and replaces the manifest
//! (`engine/store/additions.rs`, `engine/store/commit.rs`).
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

#[cfg(test)]
mod crate_map {
    /// Every `src/` path the crate map above names exists.
    #[test]
    fn crate_map_names_files_that_exist() {
        let root = env!("CARGO_MANIFEST_DIR");
        let lib = std::fs::read_to_string(format!("{root}/src/lib.rs")).unwrap();
        let map = lib.split("## Which file to open").nth(1).unwrap();
        let map = map.split("## Use it from Rust").next().unwrap();
        let mut named = 0;
        for path in map.split('`').skip(1).step_by(2) {
            let looks_like_path = path.ends_with(".rs") || path.ends_with('/');
            if looks_like_path && !path.contains(' ') {
                let at = if path.starts_with("python/") {
                    format!("{root}/{path}")
                } else {
                    format!("{root}/src/{path}")
                };
                assert!(
                    std::path::Path::new(&at).exists(),
                    "the crate map names {path}, which does not exist"
                );
                named += 1;
            }
        }
        assert!(named > 30, "only {named} paths found in the crate map");
    }
}

/// The README's Rust examples, compiled and run as doctests.
#[cfg(all(doctest, feature = "engine"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The Rust examples of `docs/compat.md`, compiled and run as doctests (every
/// file of `docs/` with a Rust example gets an item like this one).
#[cfg(doctest)]
#[doc = include_str!("../docs/compat.md")]
struct CompatDocDoctests;

/// `docs/library.md`'s Rust example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../docs/library.md")]
struct LibraryDocDoctests;

/// `docs/seen-store.md`'s Rust example, compiled and run as a doctest.
#[cfg(all(doctest, feature = "engine"))]
#[doc = include_str!("../docs/seen-store.md")]
struct SeenStoreDoctests;
