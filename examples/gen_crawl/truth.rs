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

use urikey::uri::key::{KeyConfig, KeyScratch, Keyer, Relative};

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
    /// Distinct lines, valid or not (kept only when keying, `--from`).
    distinct_lines: KeySet,
    /// Lines the `rfc` keyer accepted but `none` or `syntax` rejected
    /// (keyed truth only; expected to stay 0).
    keying_disagreements: u64,
    /// Lines whose validity disagreed with the crate's parser (`--verify`).
    pub verify_mismatches: u64,
}

/// The library's keyers for the three profiles, set up as `urikey dedup`
/// sets them by default (strict, relative references invalid), for a truth
/// computed by keying each line instead of by construction.
pub struct Keyers {
    none: Keyer,
    syntax: Keyer,
    rfc: Keyer,
    scratch: KeyScratch,
}

impl Keyers {
    pub fn new() -> Self {
        let keyer = |profile: &str| {
            profile
                .parse::<KeyConfig>()
                .expect("a built-in profile name")
                .keyer()
                .with_relative(Relative::Reject)
        };
        Keyers {
            none: keyer("none"),
            syntax: keyer("syntax"),
            rfc: keyer("rfc"),
            scratch: KeyScratch::default(),
        }
    }

    /// True when the line has a key (`urikey dedup` does not report it as
    /// invalid).
    pub fn is_valid(&mut self, line: &[u8]) -> bool {
        self.rfc.fingerprint(line, &mut self.scratch).is_ok()
    }
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

    /// Records a line of a `--from` dump: its keys come from the library.
    ///
    /// `known_valid` is the line's validity when the caller knows it; a
    /// repeat (`Origin::Repeat`) brings no new key or line and is only
    /// counted.
    pub fn keyed(
        &mut self,
        line: &[u8],
        origin: Origin,
        known_valid: Option<bool>,
        k: &mut Keyers,
    ) {
        self.count(line);
        match origin {
            Origin::Fresh => self.fresh += 1,
            Origin::Repeat => self.repeats += 1,
            Origin::Variant => self.variants += 1,
        }
        if origin == Origin::Repeat {
            if !known_valid.unwrap_or_else(|| k.is_valid(line)) {
                self.invalid += 1;
            }
            return;
        }
        self.distinct_lines.insert(fingerprint(line));
        match k.rfc.fingerprint(line, &mut k.scratch) {
            Ok(rfc) => {
                self.rfc.insert(rfc);
                for (keyer, set) in [(&k.none, &mut self.none), (&k.syntax, &mut self.syntax)] {
                    match keyer.fingerprint(line, &mut k.scratch) {
                        Ok(key) => {
                            set.insert(key);
                        }
                        Err(_) => self.keying_disagreements += 1,
                    }
                }
            }
            Err(_) => {
                self.invalid += 1;
                self.invalid_lines.insert(fingerprint(line));
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

    /// The report as one JSON object. `from` describes the real lists of
    /// a `--from` dump (its truth was keyed, and its invalid lines are the
    /// lists' own, so there are no generated invalid kinds).
    pub fn to_json(
        &self,
        seed: u64,
        dup_ratio: f64,
        invalid_ratio: f64,
        verified: bool,
        from: Option<&FromReport>,
    ) -> String {
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
             \"variant_kinds\": {{{vk}}}",
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
        match from {
            None => s.push_str(&format!(
                ",\n  \"invalid_kinds\": {{{ik}}},\n  \"truth\": \"by construction\""
            )),
            Some(f) => {
                let names = f
                    .names
                    .iter()
                    .map(|n| json_string(n))
                    .collect::<Vec<_>>()
                    .join(", ");
                s.push_str(&format!(
                    ",\n  \"truth\": \"keyed\",\n  \"distinct_lines\": {},\n  \
                     \"keying_disagreements\": {},\n  \"from\": [{names}],\n  \
                     \"base_lines\": {},\n  \"base_invalid\": {},\n  \"passes\": {}",
                    self.distinct_lines.len(),
                    self.keying_disagreements,
                    f.base_lines,
                    f.base_invalid,
                    f.passes,
                ));
            }
        }
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

/// What the truth report says about the lists of a `--from` dump.
pub struct FromReport {
    /// The list file names.
    pub names: Vec<String>,
    /// Non-empty lines read from the lists.
    pub base_lines: usize,
    /// Base lines without a key.
    pub base_invalid: usize,
    /// Passes over the bases started by the fresh lines.
    pub passes: u64,
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
