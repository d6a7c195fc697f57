//! Dirty lines that a strict RFC 3986 parser must reject.
//!
//! Each kind breaks the grammar of a URI-reference in a way no repair is
//! implied: the line is invalid wherever the damage lands.

use crate::canon::Parts;
use crate::rng::Rng;
use crate::vocab::WORDS;

/// One way of breaking a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A literal space in the path.
    Space,
    /// `%zz`, `%g1`, `%4` at the end of the path.
    BadPercent,
    /// `http://[::1/...`: an IP literal without `]`.
    UnclosedIpLiteral,
    /// Raw UTF-8 bytes (non-ASCII) in the path.
    NonAscii,
    /// Bare words with a `:` that cannot start a scheme (`my_word:x`, `:x`).
    BareWordColon,
    /// A character RFC 3986 never allows literally (`|`, `{`, `"`, `\`, ...).
    ForbiddenAscii,
    /// A second `#`.
    DoubleHash,
    /// A non-digit port.
    BadPort,
}

/// All kinds, in report order.
pub const KINDS: [Kind; 8] = [
    Kind::Space,
    Kind::BadPercent,
    Kind::UnclosedIpLiteral,
    Kind::NonAscii,
    Kind::BareWordColon,
    Kind::ForbiddenAscii,
    Kind::DoubleHash,
    Kind::BadPort,
];

const WEIGHTS: [u32; 8] = [20, 15, 5, 15, 10, 20, 8, 7];

impl Kind {
    /// Name used in the truth report.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Space => "space",
            Kind::BadPercent => "bad_percent",
            Kind::UnclosedIpLiteral => "unclosed_ip_literal",
            Kind::NonAscii => "non_ascii",
            Kind::BareWordColon => "bare_word_colon",
            Kind::ForbiddenAscii => "forbidden_ascii",
            Kind::DoubleHash => "double_hash",
            Kind::BadPort => "bad_port",
        }
    }
}

/// Picks a kind of damage.
pub fn choose(r: &mut Rng) -> Kind {
    KINDS[r.weighted(&WEIGHTS)]
}

/// Appends to `out` a broken line made from the valid canonical URL `canon`
/// (`scratch` is a reusable buffer).
pub fn write(r: &mut Rng, kind: Kind, canon: &Parts, scratch: &mut Parts, out: &mut Vec<u8>) {
    scratch.copy_from(canon);
    match kind {
        Kind::Space => prefix_path(r, scratch, b" "),
        Kind::BadPercent => {
            let bad: &[u8] = r.pick::<&[u8]>(&[b"%zz", b"%g1", b"%4", b"%", b"%2x"]);
            scratch.path.clear();
            scratch.path.push(b'/');
            scratch.path.extend_from_slice(r.pick(WORDS).as_bytes());
            scratch.path.extend_from_slice(bad);
        }
        Kind::UnclosedIpLiteral => {
            scratch.host.clear();
            let host: &[u8] = r.pick::<&[u8]>(&[b"[::1", b"[2001:db8::1", b"[fe80::1%25eth0"]);
            scratch.host.extend_from_slice(host);
            scratch.port = None;
        }
        Kind::NonAscii => {
            let bytes = r.pick(&["é", "ü", "日本", "ñ", "\u{2013}"]).as_bytes();
            prefix_path(r, scratch, bytes);
        }
        Kind::BareWordColon => {
            bare_word_colon(r, out);
            return;
        }
        Kind::ForbiddenAscii => {
            let b = *r.pick(b"|{}\"<>\\^`");
            prefix_path(r, scratch, &[b]);
        }
        Kind::DoubleHash => {
            let mut f = scratch.fragment.take().unwrap_or_default();
            f.extend_from_slice(b"#");
            f.extend_from_slice(r.pick(WORDS).as_bytes());
            scratch.fragment = Some(f);
        }
        Kind::BadPort => {
            let port: &[u8] = r.pick::<&[u8]>(&[b"8o", b"80a", b"https", b"-1"]);
            scratch.port = Some(port.to_vec());
        }
    }
    scratch.render(out);
}

/// Puts `/word<bad>word` in front of the path.
fn prefix_path(r: &mut Rng, p: &mut Parts, bad: &[u8]) {
    let mut seg = Vec::with_capacity(24);
    seg.push(b'/');
    seg.extend_from_slice(r.pick(WORDS).as_bytes());
    seg.extend_from_slice(bad);
    seg.extend_from_slice(r.pick(WORDS).as_bytes());
    p.path.splice(0..0, seg);
}

/// `my_word:x`, `:x` or `7word: x`: a `:` before any `/` that no valid
/// scheme precedes, so the line is neither a URI nor a relative reference.
fn bare_word_colon(r: &mut Rng, out: &mut Vec<u8>) {
    match r.below(3) {
        0 => {
            out.extend_from_slice(r.pick(WORDS).as_bytes());
            out.push(b'_');
            out.extend_from_slice(r.pick(WORDS).as_bytes());
            out.push(b':');
            out.extend_from_slice(r.pick(WORDS).as_bytes());
        }
        1 => {
            out.push(b':');
            out.extend_from_slice(r.pick(WORDS).as_bytes());
        }
        _ => {
            out.push(b'0' + r.below(10) as u8);
            out.extend_from_slice(r.pick(WORDS).as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(r.pick(WORDS).as_bytes());
        }
    }
}
