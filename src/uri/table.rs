//! Byte-class tables built from the RFC 3986 ABNF.
//!
//! One 256-entry table maps each byte to a set of class bits; every
//! component is a mask over those bits, so checking "may this byte appear
//! literally in the query" is one load and one `and`. Bytes `>= 0x80` and
//! controls have no bits, so they are never allowed.

/// `unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"` (§2.3)
pub const UNRESERVED: u8 = 1 << 0;
/// `sub-delims = "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "="` (§2.2)
pub const SUB_DELIMS: u8 = 1 << 1;
/// `":"`
pub const COLON: u8 = 1 << 2;
/// `"@"`
pub const AT: u8 = 1 << 3;
/// `"/"`
pub const SLASH: u8 = 1 << 4;
/// `"?"`
pub const QUESTION: u8 = 1 << 5;
/// `ALPHA / DIGIT / "+" / "-" / "."`: the bytes of a scheme after its first (§3.1)
pub const SCHEME_CHAR: u8 = 1 << 6;
/// `HEXDIG = DIGIT / "A"-"F" / "a"-"f"`
pub const HEXDIG: u8 = 1 << 7;

/// `userinfo = *( unreserved / pct-encoded / sub-delims / ":" )` (§3.2.1)
pub const USERINFO: u8 = UNRESERVED | SUB_DELIMS | COLON;
/// `reg-name = *( unreserved / pct-encoded / sub-delims )` (§3.2.2)
pub const REG_NAME: u8 = UNRESERVED | SUB_DELIMS;
/// `pchar = unreserved / pct-encoded / sub-delims / ":" / "@"` (§3.3)
pub const PCHAR: u8 = UNRESERVED | SUB_DELIMS | COLON | AT;
/// A path: `pchar` plus the `"/"` that separates segments (§3.3)
pub const PATH: u8 = PCHAR | SLASH;
/// `query = *( pchar / "/" / "?" )` (§3.4)
pub const QUERY: u8 = PCHAR | SLASH | QUESTION;
/// `fragment = *( pchar / "/" / "?" )` (§3.5)
pub const FRAGMENT: u8 = QUERY;
/// `IPvFuture` tail: `1*( unreserved / sub-delims / ":" )` (§3.2.2)
pub const IPV_FUTURE: u8 = UNRESERVED | SUB_DELIMS | COLON;

const fn build() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let mut bits = 0;
        let alpha = c.is_ascii_alphabetic();
        let digit = c.is_ascii_digit();
        if alpha || digit || c == b'-' || c == b'.' || c == b'_' || c == b'~' {
            bits |= UNRESERVED;
        }
        if matches!(
            c,
            b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
        ) {
            bits |= SUB_DELIMS;
        }
        if c == b':' {
            bits |= COLON;
        }
        if c == b'@' {
            bits |= AT;
        }
        if c == b'/' {
            bits |= SLASH;
        }
        if c == b'?' {
            bits |= QUESTION;
        }
        if alpha || digit || c == b'+' || c == b'-' || c == b'.' {
            bits |= SCHEME_CHAR;
        }
        if c.is_ascii_hexdigit() {
            bits |= HEXDIG;
        }
        t[b] = bits;
        b += 1;
    }
    t
}

/// The class bits of every byte.
pub static CLASS: [u8; 256] = build();

/// Does `b` belong to any class in `mask`?
#[inline(always)]
pub fn is(b: u8, mask: u8) -> bool {
    CLASS[b as usize] & mask != 0
}

/// Is `b` an `unreserved` byte (§2.3)?
#[inline(always)]
pub fn is_unreserved(b: u8) -> bool {
    is(b, UNRESERVED)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_unreserved(c: u8) -> bool {
        c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~')
    }
    fn naive_sub_delim(c: u8) -> bool {
        b"!$&'()*+,;=".contains(&c)
    }

    #[test]
    fn table_matches_naive_oracle_for_every_byte() {
        for b in 0..=255u8 {
            assert_eq!(is(b, UNRESERVED), naive_unreserved(b), "{b:#x}");
            assert_eq!(is(b, SUB_DELIMS), naive_sub_delim(b), "{b:#x}");
            let pchar = naive_unreserved(b) || naive_sub_delim(b) || b == b':' || b == b'@';
            assert_eq!(is(b, PCHAR), pchar, "{b:#x}");
            assert_eq!(is(b, QUERY), pchar || b == b'/' || b == b'?', "{b:#x}");
            assert_eq!(
                is(b, USERINFO),
                naive_unreserved(b) || naive_sub_delim(b) || b == b':'
            );
            assert_eq!(is(b, REG_NAME), naive_unreserved(b) || naive_sub_delim(b));
            let scheme = b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.');
            assert_eq!(is(b, SCHEME_CHAR), scheme);
            assert_eq!(is(b, HEXDIG), b.is_ascii_hexdigit());
        }
    }
}
