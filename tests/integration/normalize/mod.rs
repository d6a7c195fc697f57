//! Normalization: conformance vectors (`conformance`), one test per flag
//! (`flags`), properties (`props`), the fast tiers against the general one
//! (`fast_path`, `http_tier`), other canonicalizers' expectations
//! (`crawl_canon`) and the `urikey normalize` command line (`cli`).

use urikey::uri::key::{KeyError, KeyScratch, Keyer};
use urikey::uri::normalize::{Flag, Flags, Normalizer, Profile};

mod util {
    use super::*;

    /// The key through the full `uri_key` (fast path first).
    pub fn key(c: &Keyer, input: &[u8]) -> Result<Vec<u8>, KeyError> {
        let mut scratch = KeyScratch::default();
        c.uri_key(input, &mut scratch).map(|k| k.to_vec())
    }

    /// The key through the slow path only.
    pub fn slow_key(c: &Keyer, input: &[u8]) -> Result<Vec<u8>, KeyError> {
        let mut scratch = KeyScratch::default();
        c.general_tier_key(input, &mut scratch).map(|k| k.to_vec())
    }

    /// The key of `input` through the general tier (parser and normalizer).
    pub fn norm(n: &Normalizer, input: &str) -> String {
        slow_key(&Keyer::new(n.clone()), input.as_bytes())
            .map_or_else(|e| panic!("{input:?}: {e}"), |k| s(&k))
    }

    pub fn s(b: &[u8]) -> String {
        String::from_utf8_lossy(b).into_owned()
    }
}

use util::*;

mod cli;
mod conformance;
mod crawl_canon;
mod fast_path;
mod flags;
mod http_tier;
mod props;

/// The engine shares one canonicalizer across rayon workers.
#[test]
fn canonicalizer_is_shareable() {
    fn check<T: Send + Sync + Clone + std::fmt::Debug + Default>() {}
    check::<Keyer>();
    check::<Normalizer>();
    let c = Keyer::default();
    assert_eq!(c.normalizer(), &Normalizer::profile(Profile::Rfc));
    assert!(!c.is_lenient());
}
