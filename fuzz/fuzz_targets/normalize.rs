//! Fuzz target `normalize`: for any line and any flag set, keying never
//! panics, the fast path agrees with the slow path (with the CPU's scanner
//! and with the portable one), lenient reading agrees
//! with strict reading on every line strict reading accepts, a key parses
//! again and is its own key (idempotence), the SURT of a key reads back
//! to the key (injectivity), and the SURT's fast path writes what parsing
//! the key writes, for any bytes.
//!
//! Input layout: the first four bytes pick the flags (little-endian bit
//! set over `Flag::ALL`), the rest is the line.

#![no_main]

use libfuzzer_sys::fuzz_target;
use urikey::uri::key::{write_key, Keyer, KeyFormat, KeyScratch};
use urikey::uri::normalize::{Flag, Flags, Normalizer};
use urikey::uri::surt::{parse_surt, write_surt, write_surt_by_parsing};

fuzz_target!(|data: &[u8]| {
    let (bits, line) = match data.split_first_chunk::<4>() {
        Some((bits, line)) => (u32::from_le_bytes(*bits), line),
        None => (0, data),
    };
    let flags = Flag::ALL
        .iter()
        .enumerate()
        .filter(|(i, _)| bits >> i & 1 == 1)
        .fold(Flags::EMPTY, |f, (_, flag)| f.with(*flag));
    let mut normalizer = Normalizer::from_flags(flags);
    if flags.has(Flag::RemoveQueryParams) {
        normalizer = normalizer.remove_query_params(["utm_*", "ref"]);
    }
    let strict = Keyer::new(normalizer.clone());
    let lenient = Keyer::new(normalizer).with_lenient(true);

    let (mut fast_surt, mut parsed_surt) = (Vec::new(), Vec::new());
    write_surt(line, &mut fast_surt);
    write_surt_by_parsing(line, &mut parsed_surt);
    assert_eq!(fast_surt, parsed_surt, "the SURT fast path disagrees");

    let mut s1 = KeyScratch::default();
    let mut s2 = KeyScratch::default();
    let fast = strict.uri_key(line, &mut s1).map(|k| k.to_vec());
    let slow = strict.general_tier_key(line, &mut s2).map(|k| k.to_vec());
    assert_eq!(fast, slow, "fast and slow paths disagree");
    let portable = strict.clone().with_portable_scan();
    assert_eq!(
        portable.uri_key(line, &mut s2).map(|k| k.to_vec()),
        fast,
        "the portable scanner disagrees"
    );
    let avx2 = strict.clone().without_mask_tier();
    assert_eq!(
        avx2.uri_key(line, &mut s2).map(|k| k.to_vec()),
        fast,
        "the AVX2 tier without the mask tier disagrees"
    );

    let lenient_key = lenient.uri_key(line, &mut s1).map(|k| k.to_vec());
    assert_eq!(
        lenient_key,
        lenient.general_tier_key(line, &mut s2).map(|k| k.to_vec())
    );
    if let Err(e) = &lenient_key {
        assert!(
            e.index() <= line.len(),
            "lenient error index outside the line"
        );
    }
    if let Ok(key) = &fast {
        assert_eq!(
            lenient_key.as_ref().ok(),
            Some(key),
            "lenient differs on a strict line"
        );
    }

    for key in [fast.ok(), lenient_key.ok()].into_iter().flatten() {
        let again = strict.uri_key(&key, &mut s1).map(|k| k.to_vec());
        assert_eq!(again.as_ref(), Ok(&key), "not idempotent");
        let mut surt = Vec::new();
        write_key(&key, KeyFormat::Surt, &mut surt);
        assert_eq!(
            parse_surt(&surt).as_ref(),
            Some(&key),
            "SURT does not read back"
        );
    }
});
