//! The byte sets of w3lib's quoting passes (which bytes each part keeps
//! as they are), as tables and as 16-byte tests.

use crate::uri::compat::bytes::Set;
use crate::uri::lanes::Lanes;

pub(super) const fn set(extra: &[u8], minus: &[u8]) -> Set {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~');
        c += 1;
    }
    let mut i = 0;
    while i < extra.len() {
        t[extra[i] as usize] = true;
        i += 1;
    }
    let mut i = 0;
    while i < minus.len() {
        t[minus[i] as usize] = false;
        i += 1;
    }
    t
}

/// RFC 3986 unreserved: what `urlencode` leaves alone.
pub(super) const UNRESERVED: Set = set(b"", b"");
/// Userinfo: unreserved and sub-delims except `;` and `=` (no `%`: the
/// userinfo is decoded first, so every `%` left is a literal one).
pub(super) const USERINFO_SAFEST: Set = set(b"!$&'()*+,", b"");
/// Path, query and fragment on the first, "make it safe" pass: reserved,
/// unreserved and `%`, minus `#[]|`.
pub(super) const PATH_SAFEST: Set = set(b":/?#[]@!$&'()*+,;=|%", b"#[]|");
// (The reference's query set, which also escapes `'` for a special
// scheme, needs no table: the query is decoded right after that pass, see
// `write_query`.)
/// The path on the second pass keeps `[`, `]`, `|` and reserved bytes as
/// they are: these and the unreserved ones are copied.
pub(super) const PATH_PLAIN: Set = set(b":/?[]@!$&'()*+,;=|", b"");

/// Where a plain run of the path stops: a byte that is not plain, the `?`
/// that ends the path, or a `;` that may start params.
pub(super) const PATH_STOP: Set = {
    let mut t = not(&PATH_PLAIN);
    t[b'?' as usize] = true;
    t[b';' as usize] = true;
    t
};

/// `PATH_STOP` on 16 bytes at once, and a few plain bytes that are rare
/// in paths (`$=]|`): neighbours in ASCII are tested as one range, 6 tests
/// instead of 10. The path pass checks each byte it stops at in the table,
/// and passes over such a byte.
#[inline(always)]
pub(super) fn path_stop_lanes(v: Lanes) -> Lanes {
    !v.range(0x21, 0x7e)
        | v.range(b'"', b'%')
        | v.range(b';', b'?')
        | v.range(b'\\', b'^')
        | v.eq(b'`')
        | v.range(b'{', b'}')
}

pub(super) const fn not(set: &Set) -> Set {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = !set[c];
        c += 1;
    }
    t
}

/// The bytes not in `UNRESERVED`.
pub(super) const RESERVED: Set = not(&UNRESERVED);

/// The bytes whose escapes `quote_plus` writes again: the reserved ones
/// but the space (a `+`).
pub(super) const QUERY_KEPT: Set = {
    let mut t = RESERVED;
    t[b' ' as usize] = false;
    t
};

/// `RESERVED` on 16 bytes at once.
#[inline(always)]
pub(super) fn reserved_lanes(v: Lanes) -> Lanes {
    !(v.range(b'0', b'9')
        | v.range(b'a', b'z')
        | v.range(b'A', b'Z')
        | v.range(b'-', b'.')
        | v.eq(b'_')
        | v.eq(b'~'))
}

/// The path bytes an escape is decoded to: the path-safe ones but `%`, `/`,
/// `;` and `?`, whose escapes are kept.
pub(super) const PATH_DECODED: Set = set(b":[]@!$&'()*+,=|", b"");
/// The bytes whose escapes the path keeps.
pub(super) const PATH_KEPT: Set = not(&PATH_DECODED);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates_agree_with_their_tables() {
        for b in 0..=255u8 {
            let v = Lanes::load(&[b; 16]);
            // The lanes flag every stop, and no other byte but `$=]|`.
            let flagged = path_stop_lanes(v).bits() != 0;
            let want = PATH_STOP[b as usize] || b"$=]|".contains(&b);
            assert_eq!(flagged, want, "{b:#x}");
            assert_eq!(
                reserved_lanes(v).bits() != 0,
                RESERVED[b as usize],
                "{b:#x}"
            );
        }
    }
}
