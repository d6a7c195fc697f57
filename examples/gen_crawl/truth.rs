//! Ground truth: counts of what was written and the number of distinct keys
//! under each profile.
//!
//! Keys are stored as 128-bit XXH3 fingerprints (the crate's own hash) to
//! bound memory on multi-GB runs: about 16 bytes per distinct key and
//! profile plus table overhead. Two different keys share a fingerprint with
//! probability about n²/2¹²⁹, which is negligible for any dump that fits
//! on a disk.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use crate::{invalid, variant};

/// A hasher for keys that are already uniform fingerprints: it keeps the
/// low 64 bits.
#[derive(Default)]
pub struct LowBits(u64);

impl Hasher for LowBits {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = v as u64;
    }
}

type KeySet = HashSet<u128, BuildHasherDefault<LowBits>>;

fn fingerprint(key: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(key)
}

/// What kind of line was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A newly drawn canonical URL.
    Fresh,
    /// A byte-exact repeat of an earlier line.
    Repeat,
    /// An equivalent rewrite of an earlier canonical URL.
    Variant,
}

/// Running totals.
#[derive(Default)]
pub struct Truth {
    lines: u64,
    bytes: u64,
    fresh: u64,
    repeats: u64,
    variants: u64,
    variant_kinds: [u64; variant::KINDS.len()],
    invalid: u64,
    invalid_kinds: [u64; invalid::KINDS.len()],
    /// Distinct invalid lines, so that tools which dedup every line
    /// byte-exactly can be checked: they should print `unique_none +
    /// distinct_invalid` lines.
    invalid_lines: KeySet,
    none: KeySet,
    syntax: KeySet,
    rfc: KeySet,
    /// Lines whose validity disagreed with the crate's parser (`--verify`).
    pub verify_mismatches: u64,
}

impl Truth {
    /// Bytes written so far, newlines included.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Lines written so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Records a valid line (without its newline) and its keys.
    ///
    /// Keys known to be present already are not hashed again: a repeat
    /// brings nothing new, and a variant's canonical URL (its `rfc` key, and
    /// its `syntax` key unless an `rfc`-only rewrite was applied) was written
    /// as a fresh line before.
    pub fn valid(&mut self, line: &[u8], syntax_key: &[u8], rfc_key: &[u8], origin: Origin) {
        self.count(line);
        match origin {
            Origin::Fresh => {
                self.fresh += 1;
                // A fresh line is its own key under every profile.
                debug_assert!(line == rfc_key && syntax_key == rfc_key);
                let key = fingerprint(line);
                self.none.insert(key);
                self.syntax.insert(key);
                self.rfc.insert(key);
            }
            Origin::Repeat => self.repeats += 1,
            Origin::Variant => {
                self.variants += 1;
                self.none.insert(fingerprint(line));
                if syntax_key != rfc_key {
                    self.syntax.insert(fingerprint(syntax_key));
                }
            }
        }
    }

    /// Records the rewrites of a variant line.
    pub fn variant_kinds(&mut self, kinds: &[variant::Kind]) {
        for k in kinds {
            if let Some(i) = variant::KINDS.iter().position(|x| x == k) {
                self.variant_kinds[i] += 1;
            }
        }
    }

    /// Records an invalid line.
    pub fn invalid(&mut self, line: &[u8], kind: invalid::Kind) {
        self.count(line);
        self.invalid += 1;
        self.invalid_lines.insert(fingerprint(line));
        if let Some(i) = invalid::KINDS.iter().position(|&x| x == kind) {
            self.invalid_kinds[i] += 1;
        }
    }

    fn count(&mut self, line: &[u8]) {
        self.lines += 1;
        self.bytes += line.len() as u64 + 1;
    }

    /// The report as one JSON object.
    pub fn to_json(&self, seed: u64, dup_ratio: f64, invalid_ratio: f64, verified: bool) -> String {
        let kinds = |names: &mut dyn Iterator<Item = (&str, u64)>| {
            names
                .map(|(n, c)| format!("\"{n}\": {c}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let vk = kinds(
            &mut variant::KINDS
                .iter()
                .zip(self.variant_kinds)
                .map(|(k, c)| (k.name(), c)),
        );
        let ik = kinds(
            &mut invalid::KINDS
                .iter()
                .zip(self.invalid_kinds)
                .map(|(k, c)| (k.name(), c)),
        );
        let mut s = format!(
            "{{\n  \"generator\": \"gen-crawl\",\n  \"seed\": {seed},\n  \"dup_ratio\": {dup_ratio},\n  \
             \"invalid_ratio\": {invalid_ratio},\n  \"lines\": {},\n  \"bytes\": {},\n  \
             \"invalid\": {},\n  \"distinct_invalid\": {},\n  \"valid\": {},\n  \"unique_none\": {},\n  \"unique_syntax\": {},\n  \
             \"unique_rfc\": {},\n  \"fresh\": {},\n  \"exact_repeats\": {},\n  \"variants\": {},\n  \
             \"variant_kinds\": {{{vk}}},\n  \"invalid_kinds\": {{{ik}}}",
            self.lines,
            self.bytes,
            self.invalid,
            self.invalid_lines.len(),
            self.lines - self.invalid,
            self.none.len(),
            self.syntax.len(),
            self.rfc.len(),
            self.fresh,
            self.repeats,
            self.variants,
        );
        if verified {
            s.push_str(&format!(
                ",\n  \"verify_mismatches\": {}",
                self.verify_mismatches
            ));
        }
        s.push_str("\n}\n");
        s
    }
}
