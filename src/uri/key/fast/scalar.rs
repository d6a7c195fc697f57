//! Byte classes and the run scanners of the fast tier of
//! [`uri_key`](super::super::Keyer::uri_key): [`Scalar`], eight bytes at a
//! time on any target, and on x86_64 with AVX2 the 32-at-a-time scanner of
//! `avx2.rs`. Both implement [`Scan`], and the fast tier is written
//! once, generic over it.

use crate::uri::table::{self, PCHAR, QUERY};

/// `a-z 0-9 - . _ ~`: a host byte that lower-casing leaves alone.
pub(in crate::uri::key) const F_HOST: u8 = 1;
/// `ALPHA DIGIT - . _ ~`: an unreserved host byte in either case.
pub(in crate::uri::key) const F_HOST_ANY: u8 = 2;
/// `pchar / "/"`, but not `%` or `.`.
pub(in crate::uri::key) const F_PATH_PLAIN: u8 = 4;
/// `pchar / "/" / "?"`, but not `%` (query and fragment).
pub(in crate::uri::key) const F_QUERY_PLAIN: u8 = 8;
/// `unreserved / sub-delims / ":"`: userinfo, but not `%`.
pub(in crate::uri::key) const F_USERINFO: u8 = 16;

const fn fast_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let mut bits = 0;
        if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'-' | b'.' | b'_' | b'~') {
            bits |= F_HOST;
        }
        if (table::CLASS[b] & PCHAR != 0 || c == b'/') && c != b'.' {
            bits |= F_PATH_PLAIN;
        }
        if table::CLASS[b] & QUERY != 0 {
            bits |= F_QUERY_PLAIN;
        }
        if table::CLASS[b] & table::UNRESERVED != 0 {
            bits |= F_HOST_ANY;
        }
        if table::CLASS[b] & table::USERINFO != 0 {
            bits |= F_USERINFO;
        }
        t[b] = bits;
        b += 1;
    }
    t
}

/// The class bits of every byte, for tables built at compile time.
pub(in crate::uri::key) const CLASSES: [u8; 256] = fast_table();

/// The class bits of every byte.
static FAST: [u8; 256] = CLASSES;

/// Finds where a run of bytes of one class ends.
pub(in crate::uri::key) trait Scan: Copy {
    /// Skips bytes of class `C` (a single class bit) from `i` and returns
    /// the index of the first byte outside the class (or `s.len()`).
    fn skip<const C: u8>(self, s: &[u8], i: usize) -> usize;
}

/// The portable scanner: eight bytes per step, a table lookup per byte.
#[derive(Clone, Copy, Debug, Default)]
pub(in crate::uri::key) struct Scalar;

impl Scan for Scalar {
    #[inline(always)]
    fn skip<const C: u8>(self, s: &[u8], i: usize) -> usize {
        skip::<C>(s, i)
    }
}

/// The value of each hex digit; 16 for any other byte. `lower` marks the
/// digits `a-f` with 32, so that one OR of two entries says both whether
/// an escape is valid and whether it has a lower-case digit.
const fn hex_table() -> [u8; 256] {
    let mut t = [16u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = match c {
            b'0'..=b'9' => c - b'0',
            b'A'..=b'F' => c - b'A' + 10,
            b'a'..=b'f' => (c - b'a' + 10) | LOWER_HEX,
            _ => 16,
        };
        b += 1;
    }
    t
}

/// The flag of a lower-case digit in [`hex`].
pub(in crate::uri::key) const LOWER_HEX: u8 = 32;

static HEX: [u8; 256] = hex_table();

/// The value of hex digit `b` (plus [`LOWER_HEX`] for `a-f`), or 16 and
/// up for a byte that is not a hex digit. A table, not a `match`: digits
/// and letters mix at random in escapes, and branches on them mispredict.
#[inline(always)]
pub(in crate::uri::key) fn hex(b: u8) -> u8 {
    HEX[b as usize]
}

/// The class bits of `b`.
#[inline(always)]
pub(in crate::uri::key) fn class(b: u8) -> u8 {
    FAST[b as usize]
}

/// Skips bytes of class `c` (a single bit) from `i` and returns the index
/// of the first byte outside the class (or `s.len()`).
///
/// Eight bytes at a time: the AND of their classes says whether all are in
/// the class; in the word where the run ends, the classes are packed into
/// a `u64` and `trailing_zeros` finds the byte, so the scan has one branch
/// per word and none per byte (a per-byte loop would mispredict its exit
/// at every stop). The last partial word is read as the input's last eight
/// bytes, ignoring the ones already scanned.
#[inline(always)]
fn skip<const C: u8>(s: &[u8], mut i: usize) -> usize {
    let c = C;
    let n = s.len();
    while let Some(w) = s.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let all = class(w[0])
            & class(w[1])
            & class(w[2])
            & class(w[3])
            & class(w[4])
            & class(w[5])
            & class(w[6])
            & class(w[7]);
        if all & c == 0 {
            return i + stop_in::<C>(w);
        }
        i += 8;
    }
    if i >= n {
        return n;
    }
    match s.last_chunk::<8>() {
        // Bytes n-8 .. i were scanned already.
        Some(w) => n - 8 + first_outside(w, c, 8 - (n - i)),
        None => {
            while i < n && class(s[i]) & c != 0 {
                i += 1;
            }
            i
        }
    }
}

/// Index of the first byte of `w` outside class `C`, which has one.
///
/// Not inlined: inlined, the compiler keeps the eight classes of the
/// word-at-a-time test alive for it, which costs more spilled registers
/// in the loop than the call costs at the end of a run.
#[inline(never)]
fn stop_in<const C: u8>(w: &[u8; 8]) -> usize {
    const LOW: u64 = 0x0101_0101_0101_0101;
    let outside = ((packed(w) >> C.trailing_zeros()) & LOW) ^ LOW;
    // trailing_zeros is 64 (so 8) only for a word with no stop.
    (outside.trailing_zeros() / 8) as usize
}

/// The classes of the eight bytes of `w`, one per byte.
#[inline(always)]
fn packed(w: &[u8; 8]) -> u64 {
    u64::from_le_bytes([
        class(w[0]),
        class(w[1]),
        class(w[2]),
        class(w[3]),
        class(w[4]),
        class(w[5]),
        class(w[6]),
        class(w[7]),
    ])
}

/// Index of the first byte of `w`, at or after `from`, outside class `c`
/// (8 when there is none).
#[inline(always)]
fn first_outside(w: &[u8; 8], c: u8, from: usize) -> usize {
    const LOW: u64 = 0x0101_0101_0101_0101;
    let outside = ((packed(w) >> c.trailing_zeros()) & LOW) ^ LOW;
    let outside = outside & u64::MAX.checked_shl(8 * from as u32).unwrap_or(0);
    if outside == 0 {
        8
    } else {
        (outside.trailing_zeros() / 8) as usize
    }
}
