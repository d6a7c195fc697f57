//! Base URLs taken from real lists (`--from`) instead of generated ones.
//!
//! Each non-empty line of the lists is one base URL, kept byte for byte
//! (a leading UTF-8 BOM and a trailing CR are file artefacts and are
//! dropped). Lines the strict parser rejects are kept too: they are part of
//! real dirty data, and a dump built from the lists carries them as they
//! are (written and repeated, never respelled). Lines that parse as an
//! absolute URI can also be respelled by the variant rewrites.
//!
//! Fresh lines walk the bases in a seeded random order; once every base has
//! been written, a new order starts another pass, whose lines are exact
//! repeats of the first pass.

use std::io;

use crate::canon::{HostKind, Parts};
use crate::rng::{mix, Rng};

/// The base URLs of every list, in one buffer.
pub struct RealLists {
    text: Vec<u8>,
    /// `(start, len)` of each base line in `text`.
    spans: Vec<(usize, usize)>,
    /// Whether each base line parses as an absolute URI (and can be
    /// respelled).
    respellable: Vec<bool>,
    /// Whether each base line has a key (valid for `urikey dedup`).
    valid: Vec<bool>,
    /// The list file names (without directories), for the truth report.
    pub names: Vec<String>,
    order: Vec<u32>,
    next: usize,
    passes: u64,
    shuffle: Rng,
}

impl RealLists {
    /// Reads the lists; `is_valid` decides whether a line has a key.
    pub fn load(
        paths: &[String],
        seed: u64,
        is_valid: &mut dyn FnMut(&[u8]) -> bool,
    ) -> io::Result<Self> {
        let mut text = Vec::new();
        let mut spans = Vec::new();
        let mut names = Vec::new();
        for path in paths {
            let data = std::fs::read(path)
                .map_err(|e| io::Error::new(e.kind(), format!("--from {path}: {e}")))?;
            let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&data);
            for line in data.split(|&b| b == b'\n') {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if line.is_empty() {
                    continue;
                }
                spans.push((text.len(), line.len()));
                text.extend_from_slice(line);
            }
            let name = std::path::Path::new(path)
                .file_name()
                .map_or_else(|| path.clone(), |n| n.to_string_lossy().into_owned());
            names.push(name);
        }
        if spans.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "--from: the lists hold no lines",
            ));
        }
        if spans.len() > u32::MAX as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "--from: more than 2^32 lines",
            ));
        }
        let mut scratch = Parts::default();
        let respellable = spans
            .iter()
            .map(|&(s, n)| to_parts(&text[s..s + n], &mut scratch))
            .collect();
        let valid = spans
            .iter()
            .map(|&(s, n)| is_valid(&text[s..s + n]))
            .collect();
        let mut lists = RealLists {
            order: (0..spans.len() as u32).collect(),
            text,
            spans,
            respellable,
            valid,
            names,
            next: 0,
            passes: 0,
            shuffle: Rng::new(mix(seed ^ 0x11575)),
        };
        lists.reshuffle();
        Ok(lists)
    }

    /// Fisher–Yates over the whole order, from the pass's own stream.
    fn reshuffle(&mut self) {
        for i in (1..self.order.len()).rev() {
            let j = self.shuffle.below(i + 1);
            self.order.swap(i, j);
        }
        self.next = 0;
        self.passes += 1;
    }

    /// The next base of the walk, and whether this is its first pass.
    pub fn next_fresh(&mut self) -> (u64, bool) {
        if self.next == self.order.len() {
            self.reshuffle();
        }
        let i = self.order[self.next];
        self.next += 1;
        (u64::from(i), self.passes == 1)
    }

    /// Number of base lines.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Passes started over the bases (1 while the first is not finished).
    pub fn passes(&self) -> u64 {
        self.passes
    }

    /// Base lines without a key.
    pub fn invalid(&self) -> usize {
        self.valid.iter().filter(|&&v| !v).count()
    }

    /// The text of base `i`.
    pub fn line(&self, i: u64) -> &[u8] {
        let (s, n) = self.spans[i as usize];
        &self.text[s..s + n]
    }

    /// True when base `i` can be respelled.
    pub fn respellable(&self, i: u64) -> bool {
        self.respellable[i as usize]
    }

    /// True when base `i` has a key.
    pub fn valid(&self, i: u64) -> bool {
        self.valid[i as usize]
    }

    /// Fills `p` with the components of base `i`; false when it is not an
    /// absolute URI.
    pub fn parts(&self, i: u64, p: &mut Parts) -> bool {
        to_parts(self.line(i), p)
    }
}

/// Splits an absolute URI into `p` with the crate's strict parser (so the
/// rewrites only ever touch well-formed components).
fn to_parts(line: &[u8], p: &mut Parts) -> bool {
    let Ok(u) = urikey::uri::UriRef::parse_bytes(line) else {
        return false;
    };
    let Some(scheme) = u.scheme() else {
        return false;
    };
    let set = |v: &mut Vec<u8>, s: &str| {
        v.clear();
        v.extend_from_slice(s.as_bytes());
    };
    let opt = |s: Option<&str>| s.map(|s| s.as_bytes().to_vec());
    set(&mut p.scheme, scheme);
    p.authority = u.has_authority();
    p.userinfo = opt(u.userinfo());
    set(&mut p.host, u.host().unwrap_or(""));
    p.host_kind = if p.host.first() == Some(&b'[') {
        HostKind::V6
    } else if !p.host.is_empty() && p.host.iter().all(|b| b.is_ascii_digit() || *b == b'.') {
        HostKind::V4
    } else {
        HostKind::Name
    };
    p.port = opt(u.port());
    set(&mut p.path, u.path());
    p.query = opt(u.query());
    p.fragment = opt(u.fragment());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(line: &str) -> Option<String> {
        let mut p = Parts::default();
        to_parts(line.as_bytes(), &mut p).then(|| {
            let mut out = Vec::new();
            p.render(&mut out);
            String::from_utf8(out).unwrap()
        })
    }

    #[test]
    fn parts_render_the_line_back() {
        for line in [
            "http://a.example/x?y#z",
            "https://u:p@[::1]:8080/",
            "file:///usr/lib/node_modules/x.js",
            "mailto:someone@example.com",
            "urn:isbn:0451450523",
            "http://h:?q",
            "foo:",
            "http://h#",
        ] {
            assert_eq!(round_trip(line).as_deref(), Some(line), "{line}");
        }
        for line in ["/relative/path", "www.example.com", "http://a b/", "%zz"] {
            assert_eq!(round_trip(line), None, "{line}");
        }
    }
}
