//! The query: split into fields, decoded (`+` as space), sorted as Python
//! sorts byte tuples, and encoded with `quote_plus`.

use core::cmp::Ordering;

use super::escapes::{escape_at, kept_escapes, skip_plain};
use super::sets::{reserved_lanes, QUERY_KEPT, RESERVED, UNRESERVED};
use crate::uri::compat::bytes::{self, push_escape};

/// One field of the query, `key=value` (or a bare `key`): offsets into
/// the raw query and, after `write_field`, into the encoded bytes.
#[derive(Clone, Copy)]
pub(in crate::uri::compat) struct Field {
    /// Raw key `start..eq`, raw value `eq + 1..end` (empty when `eq == end`).
    start: usize,
    eq: usize,
    end: usize,
    /// `key=value` as it is written out, `enc.0..enc.1` of the encoded bytes.
    enc: (usize, usize),
    /// No `%`, `+` or byte that needs an escape: decoded = raw = encoded.
    plain: bool,
}

impl Field {
    fn key<'q>(&self, query: &'q [u8]) -> &'q [u8] {
        &query[self.start..self.eq]
    }

    fn value<'q>(&self, query: &'q [u8]) -> &'q [u8] {
        query.get(self.eq + 1..self.end).unwrap_or_default()
    }
}

/// The query as w3lib writes it: split on `&`, empty fields dropped, each
/// `key=value` decoded (`+` as space), sorted, and encoded with
/// `quote_plus`. The reference first makes the query safe; that pass only
/// adds escapes that the decoding removes again, so the raw query is
/// decoded here (the argument of `write_path`).
///
/// Decoding and re-encoding are one pass (`requote_plus`), and the sort
/// compares the raw fields, decoded on the fly only where an escape or `+`
/// could change the order: nothing is decoded into a buffer. Returns the
/// length of the query: up to its first `#`.
pub(super) fn write_query(
    query: &[u8],
    out: &mut Vec<u8>,
    enc: &mut Vec<u8>,
    fields: &mut Vec<Field>,
) -> usize {
    enc.clear();
    fields.clear();
    // One search for the reserved bytes splits the fields (`&`), finds
    // their first `=`, tells the plain ones (no other reserved byte) and
    // finds the `#` that ends the query: most bytes are unreserved, and the
    // search stops about twice a field. Once a field is known not to be
    // plain, its escapes are passed over.
    let (mut start, mut eq, mut plain) = (0, None, true);
    let mut i = 0;
    let len = loop {
        let rest = &query[i..];
        i += if plain {
            bytes::find(rest, reserved_lanes, |b| RESERVED[b as usize])
        } else if eq.is_none() {
            bytes::find(
                rest,
                |v| v.eq(b'&') | v.eq(b'=') | v.eq(b'#'),
                |b| matches!(b, b'&' | b'=' | b'#'),
            )
        } else {
            bytes::find(
                rest,
                |v| v.eq(b'&') | v.eq(b'#'),
                |b| matches!(b, b'&' | b'#'),
            )
        }
        .unwrap_or(rest.len());
        match query.get(i) {
            None | Some(b'&' | b'#') => {
                if i > start {
                    let field = (start, eq.unwrap_or(i), i);
                    fields.push(write_field(query, field, plain, enc));
                }
                if query.get(i) != Some(&b'&') {
                    break i;
                }
                (start, eq, plain) = (i + 1, None, true);
            }
            Some(b'=') if eq.is_none() => eq = Some(i),
            Some(_) => plain = false,
        }
        i += 1;
    };
    if fields.len() < 2 {
        // `enc` holds the field (if any) and a `&`.
        if !fields.is_empty() {
            out.push(b'?');
            out.extend_from_slice(&enc[..enc.len() - 1]);
        }
        return len;
    }
    fields.sort_unstable_by(|a, b| cmp_fields(query, a, b));
    for (n, f) in fields.iter().enumerate() {
        out.push(if n == 0 { b'?' } else { b'&' });
        out.extend_from_slice(&enc[f.enc.0..f.enc.1]);
    }
    len
}

/// Appends the field `(start, eq, end)` of `query` (its `=` at `eq`, or
/// `eq == end`) to `enc`, encoded as `key=value&` (an empty value keeps
/// its `=`, as `urlencode` writes it). A `plain` field has no reserved
/// byte but its `=`: decoding and `quote_plus` leave it as it is.
pub(super) fn write_field(
    query: &[u8],
    (start, eq, end): (usize, usize, usize),
    plain: bool,
    enc: &mut Vec<u8>,
) -> Field {
    let e0 = enc.len();
    if plain {
        enc.extend_from_slice(&query[start..end]);
        if eq == end {
            enc.push(b'=');
        }
    } else {
        requote_plus(&query[start..eq], enc);
        enc.push(b'=');
        requote_plus(&query[(eq + 1).min(end)..end], enc);
    }
    let e1 = enc.len();
    enc.push(b'&');
    Field {
        start,
        eq,
        end,
        enc: (e0, e1),
        plain,
    }
}

/// The order of Python's sort of `(key, value)` byte tuples, on the
/// decoded fields.
pub(super) fn cmp_fields(query: &[u8], a: &Field, b: &Field) -> Ordering {
    let (ka, va, kb, vb) = (a.key(query), a.value(query), b.key(query), b.value(query));
    if a.plain && b.plain {
        return cmp_bytes(ka, kb).then_with(|| cmp_bytes(va, vb));
    }
    cmp_decoded(ka, kb).then_with(|| cmp_decoded(va, vb))
}

/// The length of the common prefix of `a` and `b`.
#[inline(always)]
pub(super) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// `a.cmp(b)` in a loop: keys and values are a few bytes long and differ
/// early, where `memcmp`'s call costs more than the comparison.
pub(super) fn cmp_bytes(a: &[u8], b: &[u8]) -> Ordering {
    let d = common_prefix(a, b);
    match (a.get(d), b.get(d)) {
        (Some(x), Some(y)) => x.cmp(y),
        _ => a.len().cmp(&b.len()),
    }
}

/// `unquote_plus(a).cmp(unquote_plus(b))`. Where the raw strings first
/// differ, at `d`, the decoded ones differ in the same bytes unless an
/// escape or `+` is at `d` or an escape started just before it (its `%` at
/// `d - 1` or `d - 2`): before `d` both decode alike. Only then are the
/// two decoded byte by byte.
pub(super) fn cmp_decoded(a: &[u8], b: &[u8]) -> Ordering {
    let d = common_prefix(a, b);
    let near = |s: &[u8]| {
        let (from, to) = (d.saturating_sub(2), (d + 1).min(s.len()));
        s[from..to].iter().any(|&c| c == b'%' || c == b'+')
    };
    if near(a) || near(b) {
        decoded(a).cmp(decoded(b))
    } else {
        cmp_bytes(&a[d..], &b[d..])
    }
}

/// The bytes of `unquote_plus(raw)`, decoded one at a time: the sort
/// compares fields that seldom share more than a few bytes.
pub(super) fn decoded(raw: &[u8]) -> impl Iterator<Item = u8> + '_ {
    let mut i = 0;
    core::iter::from_fn(move || {
        let b = *raw.get(i)?;
        if let Some(d) = escape_at(raw, i) {
            i += 3;
            return Some(d);
        }
        i += 1;
        Some(if b == b'+' { b' ' } else { b })
    })
}

/// `quote_plus(unquote_plus(raw))` in one pass: unreserved bytes as they
/// are, a space (raw, `+` or `%20`) as `+`, every other byte as `%HH` (a
/// `%` that starts no escape is a literal one: `%25`). As in the path, the
/// bytes written as they are (unreserved ones, `+`, escapes kept as they
/// are) are copied in one piece, from `from`, when a byte that changes or
/// the end is reached.
pub(super) fn requote_plus(raw: &[u8], out: &mut Vec<u8>) {
    let mut from = 0;
    let mut i = bytes::find(raw, reserved_lanes, |b| RESERVED[b as usize]).unwrap_or(raw.len());
    while let Some(&b) = raw.get(i) {
        match kept_escapes(&raw[i..], &QUERY_KEPT) {
            0 if b == b'+' => i += 1,
            0 => {
                out.extend_from_slice(&raw[from..i]);
                let (byte, len) = match escape_at(raw, i) {
                    Some(d) => (d, 3),
                    None => (b, 1),
                };
                i += len;
                from = i;
                if UNRESERVED[byte as usize] {
                    out.push(byte);
                } else if byte == b' ' {
                    out.push(b'+');
                } else {
                    push_escape(byte, out);
                }
            }
            n => i += n,
        }
        i = skip_plain(raw, i, &RESERVED, reserved_lanes);
    }
    out.extend_from_slice(&raw[from..i]);
}
