//! Equivalent variants: rewrites of a canonical URL that a normalizer undoes.
//!
//! Each [`Kind`] is undone by a known set of profiles: the `syntax` kinds by
//! both `syntax` and `rfc`, the `rfc` kinds (default port, empty path) by
//! `rfc` only. So the `syntax` key of a variant is the canonical URL with
//! only its `rfc` kinds applied, and its `rfc` key is the canonical URL.

use crate::canon::{HostKind, Parts};
use crate::rng::Rng;

/// One equivalence-preserving rewrite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `HTTP://`, `Https://` (§6.2.2.1).
    SchemeCase,
    /// `WWW.Example.COM` (§6.2.2.1).
    HostCase,
    /// `%7E`, `%41`, `%2d` for unreserved characters (§6.2.2.2).
    PctUnreserved,
    /// `%2f` for `%2F` in a required escape (§6.2.2.1).
    PctHexLower,
    /// `/a/./b`, `/a/x/../b` (§6.2.2.3).
    DotSegment,
    /// `host:` with an empty port. Per the project's profile definition the
    /// `syntax` profile already drops it.
    EmptyPort,
    /// `:80` for http, `:443` for https (§6.2.3).
    DefaultPort,
    /// `http://h?q` for `http://h/?q` (§6.2.3).
    EmptyPath,
}

/// All kinds, in report order.
pub const KINDS: [Kind; 8] = [
    Kind::SchemeCase,
    Kind::HostCase,
    Kind::PctUnreserved,
    Kind::PctHexLower,
    Kind::DotSegment,
    Kind::EmptyPort,
    Kind::DefaultPort,
    Kind::EmptyPath,
];

/// Relative frequency of each kind among the rewrites of a variant line.
const WEIGHTS: [u32; 8] = [10, 16, 16, 6, 16, 5, 16, 15];

impl Kind {
    /// Name used in the truth report.
    pub fn name(self) -> &'static str {
        match self {
            Kind::SchemeCase => "scheme_case",
            Kind::HostCase => "host_case",
            Kind::PctUnreserved => "pct_unreserved",
            Kind::PctHexLower => "pct_hex_lower",
            Kind::DotSegment => "dot_segment",
            Kind::EmptyPort => "empty_port",
            Kind::DefaultPort => "default_port",
            Kind::EmptyPath => "empty_path",
        }
    }

    /// True when only the `rfc` profile (not `syntax`) undoes this kind.
    pub fn rfc_only(self) -> bool {
        matches!(self, Kind::DefaultPort | Kind::EmptyPath)
    }

    fn applies(self, p: &Parts, chosen: &[Kind]) -> bool {
        let has = |k| chosen.contains(&k);
        match self {
            Kind::SchemeCase => true,
            Kind::HostCase => p.host.iter().any(u8::is_ascii_alphabetic),
            Kind::PctUnreserved => {
                count_unreserved(&p.path) + p.query.as_deref().map_or(0, count_unreserved) > 0
            }
            Kind::PctHexLower => {
                count_hex_letters(&p.path) + p.query.as_deref().map_or(0, count_hex_letters) > 0
            }
            Kind::DotSegment => !has(Kind::EmptyPath),
            // Ports and the empty-path rule need an authority (real URLs
            // such as `mailto:a@b` have none; generated ones always do).
            Kind::EmptyPort => p.authority && p.port.is_none() && !has(Kind::DefaultPort),
            Kind::DefaultPort => {
                p.authority && p.port.is_none() && p.is_http_like() && !has(Kind::EmptyPort)
            }
            Kind::EmptyPath => {
                p.authority && p.path == b"/" && p.is_http_like() && !has(Kind::DotSegment)
            }
        }
    }
}

/// Picks 1 to 3 applicable kinds for a variant of `canon` into `chosen`.
pub fn choose(r: &mut Rng, canon: &Parts, chosen: &mut Vec<Kind>) {
    chosen.clear();
    let want = 1 + r.weighted(&[70, 25, 5]);
    let mut w = [0u32; 8];
    for _ in 0..want {
        for (i, k) in KINDS.iter().enumerate() {
            w[i] = if !chosen.contains(k) && k.applies(canon, chosen) {
                WEIGHTS[i]
            } else {
                0
            };
        }
        if w.iter().all(|&x| x == 0) {
            break;
        }
        chosen.push(KINDS[r.weighted(&w)]);
    }
}

/// Writes into `syn` the `syntax` key parts and into `line` the variant
/// parts, for the canonical `canon` rewritten by `kinds`.
pub fn apply(r: &mut Rng, canon: &Parts, kinds: &[Kind], syn: &mut Parts, line: &mut Parts) {
    syn.copy_from(canon);
    for &k in kinds.iter().filter(|k| k.rfc_only()) {
        match k {
            Kind::DefaultPort => syn.port = Some(canon.default_port().to_vec()),
            Kind::EmptyPath => syn.path.clear(),
            _ => {}
        }
    }
    line.copy_from(syn);
    // Rewrites of the path and query run before dot segments are inserted,
    // so every position they touch belongs to the canonical text.
    for &k in kinds {
        match k {
            Kind::SchemeCase => upper_some(r, &mut line.scheme),
            Kind::HostCase => upper_some(r, &mut line.host),
            Kind::PctUnreserved => {
                for _ in 0..1 + r.below(2) {
                    encode_unreserved(r, line);
                }
            }
            Kind::PctHexLower => lower_hex(r, line),
            Kind::EmptyPort => line.port = Some(Vec::new()),
            Kind::DefaultPort | Kind::EmptyPath | Kind::DotSegment => {}
        }
    }
    if kinds.contains(&Kind::DotSegment) {
        insert_dot_segment(r, &mut line.path);
    }
    debug_assert!(line.host_kind != HostKind::V4 || !kinds.contains(&Kind::HostCase));
}

/// Upper-cases some letters of `s`, at least one: all of them, the first
/// letter of each dot-separated label, or a random subset.
fn upper_some(r: &mut Rng, s: &mut [u8]) {
    let letters = s.iter().filter(|b| b.is_ascii_lowercase()).count();
    if letters == 0 {
        return;
    }
    match r.below(10) {
        0..=3 => s.make_ascii_uppercase(),
        4..=6 => {
            let mut at_start = true;
            for b in s.iter_mut() {
                if at_start {
                    b.make_ascii_uppercase();
                }
                at_start = matches!(*b, b'.' | b'[' | b':');
            }
        }
        _ => {}
    }
    if s.iter().any(u8::is_ascii_uppercase) {
        return;
    }
    // Random subset, with one forced letter so the text always changes.
    let forced = r.below(letters);
    for (seen, b) in s.iter_mut().filter(|b| b.is_ascii_lowercase()).enumerate() {
        if seen == forced || r.chance(0.25) {
            b.make_ascii_uppercase();
        }
    }
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Positions of literal unreserved bytes (not inside a `%XX` triplet).
fn unreserved_positions(s: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut skip = 0;
    s.iter().enumerate().filter_map(move |(i, &b)| {
        if skip > 0 {
            skip -= 1;
            None
        } else if b == b'%' {
            skip = 2;
            None
        } else if is_unreserved(b) {
            Some(i)
        } else {
            None
        }
    })
}

fn count_unreserved(s: &[u8]) -> usize {
    unreserved_positions(s).count()
}

/// Count of escapes whose hex has a letter (`%2F`, `%C3`, ...).
fn count_hex_letters(s: &[u8]) -> usize {
    hex_letter_escapes(s).count()
}

fn hex_letter_escapes(s: &[u8]) -> impl Iterator<Item = usize> + '_ {
    s.windows(3)
        .enumerate()
        .filter(|(_, w)| w[0] == b'%' && (w[1].is_ascii_uppercase() || w[2].is_ascii_uppercase()))
        .map(|(i, _)| i)
}

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";
const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";

/// Picks one of the places that `count` counts in the path and the query
/// together, uniformly (one draw from `r`): the part it is in and its
/// index among the places of that part. `None` when there is none.
fn pick_place<'p>(
    r: &mut Rng,
    p: &'p mut Parts,
    count: fn(&[u8]) -> usize,
) -> Option<(&'p mut Vec<u8>, usize)> {
    let in_path = count(&p.path);
    let in_query = p.query.as_deref().map_or(0, count);
    if in_path + in_query == 0 {
        return None;
    }
    let pick = r.below(in_path + in_query);
    Some(match &mut p.query {
        Some(q) if pick >= in_path => (q, pick - in_path),
        _ => (&mut p.path, pick),
    })
}

/// Replaces one unreserved byte of the path or query by `%XX` (hex case
/// random: both spellings decode to the same byte).
fn encode_unreserved(r: &mut Rng, p: &mut Parts) {
    let Some((buf, nth)) = pick_place(r, p, count_unreserved) else {
        return;
    };
    let Some(pos) = unreserved_positions(buf).nth(nth) else {
        return;
    };
    let b = buf[pos];
    let hex = if r.chance(0.35) { HEX_LOWER } else { HEX_UPPER };
    let triplet = [b'%', hex[usize::from(b >> 4)], hex[usize::from(b & 15)]];
    buf.splice(pos..=pos, triplet);
}

/// Lower-cases the hex letters of one required escape.
fn lower_hex(r: &mut Rng, p: &mut Parts) {
    let Some((buf, nth)) = pick_place(r, p, count_hex_letters) else {
        return;
    };
    let found = hex_letter_escapes(buf).nth(nth);
    if let Some(pos) = found {
        buf[pos + 1].make_ascii_lowercase();
        buf[pos + 2].make_ascii_lowercase();
    }
}

/// Inserts `./` or `word/../` right after one `/` of the path, which
/// remove_dot_segments (§5.2.4) takes out again.
fn insert_dot_segment(r: &mut Rng, path: &mut Vec<u8>) {
    let slashes = path.iter().filter(|&&b| b == b'/').count();
    if slashes == 0 {
        return;
    }
    let nth = r.below(slashes);
    let Some(pos) = path
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'/')
        .map(|(i, _)| i)
        .nth(nth)
    else {
        return;
    };
    let insert: &[u8] = match r.below(4) {
        0 | 1 => b"./",
        2 => b"x/../",
        _ => b"tmp/../",
    };
    path.splice(pos + 1..pos + 1, insert.iter().copied());
}
