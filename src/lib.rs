//! # urikey
//!
//! Strict RFC 3986 URI-references turned into canonical keys, and a parallel
//! engine that deduplicates large newline-delimited URL dumps with them.
//!
//! * [`uri`] is the library: a zero-copy strict parser with byte-exact error
//!   positions, an owned component model, reference resolution (§5.2) and
//!   normalization (§6.2) into canonical keys. It does not depend on the
//!   engine.
//! * [`engine`] cuts large inputs into chunks, normalizes every line on
//!   rayon workers and keeps the first line of every key, in input order.
//!
//! ```
//! use urikey::uri::UriRef;
//! let u = UriRef::parse("http://example.com/a?b#c")?;
//! assert_eq!(u.host(), Some("example.com"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

pub mod engine;
pub mod uri;

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
