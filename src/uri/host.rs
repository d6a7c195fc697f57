//! IP address literals of RFC 3986 §3.2.2, kept apart from the main parser so
//! they can be tested and fuzzed on their own.

use super::pct;
use super::table::{self, IPV_FUTURE};

/// Parses `IPv4address = dec-octet "." dec-octet "." dec-octet "." dec-octet`
/// (§3.2.2), where a `dec-octet` has no leading zero and is at most 255.
///
/// Returns the four octets, or `None` if `s` is not exactly that.
pub fn parse_ipv4(s: &[u8]) -> Option<[u8; 4]> {
    let mut out = [0u8; 4];
    let mut i = 0;
    for (n, slot) in out.iter_mut().enumerate() {
        if n > 0 {
            if s.get(i) != Some(&b'.') {
                return None;
            }
            i += 1;
        }
        let (value, len) = dec_octet(&s[i.min(s.len())..])?;
        *slot = value;
        i += len;
    }
    (i == s.len()).then_some(out)
}

/// Reads one `dec-octet` at the start of `s`: its value and its length.
fn dec_octet(s: &[u8]) -> Option<(u8, usize)> {
    let digits = s.iter().take(3).take_while(|b| b.is_ascii_digit()).count();
    match digits {
        0 => None,
        // A leading zero is only allowed for "0" itself.
        _ if s[0] == b'0' => Some((0, 1)),
        _ => {
            // Take as many digits as keep the value <= 255 (first match wins:
            // "256" is "25" followed by "6", which then fails at the caller).
            let mut value: u32 = 0;
            let mut len = 0;
            for &b in &s[..digits] {
                let next = value * 10 + u32::from(b - b'0');
                if next > 255 {
                    break;
                }
                value = next;
                len += 1;
            }
            Some((value as u8, len))
        }
    }
}

/// Parses an `IPv6address` (§3.2.2): all nine forms of the ABNF, including an
/// `IPv4address` as the last 32 bits (`ls32`).
///
/// Returns the eight 16-bit pieces.
///
/// # Errors
/// The offset in `s` of the first byte that cannot be part of a valid
/// address.
pub fn parse_ipv6(s: &[u8]) -> Result<[u16; 8], usize> {
    let mut pieces = [0u16; 8];
    let mut count = 0; // pieces written
    let mut gap: Option<usize> = None; // index in `pieces` where "::" stands
    let mut i = 0;

    if s.starts_with(b"::") {
        gap = Some(0);
        i = 2;
        if i == s.len() {
            return Ok(pieces);
        }
    } else if s.first() == Some(&b':') {
        return Err(0);
    }

    loop {
        if count == 8 {
            return Err(i);
        }
        // Read one h16 (1 to 4 hex digits), or an IPv4 tail.
        let start = i;
        let mut value: u32 = 0;
        while i < s.len() && i - start < 4 {
            match pct::hex_value(s[i]) {
                Some(v) => {
                    value = value * 16 + u32::from(v);
                    i += 1;
                }
                None => break,
            }
        }
        if i < s.len() && s[i] == b'.' {
            // ls32 as an IPv4address: only as the last 32 bits.
            if count > 6 {
                return Err(start);
            }
            let v4 = parse_ipv4(&s[start..]).ok_or(start)?;
            pieces[count] = u16::from_be_bytes([v4[0], v4[1]]);
            pieces[count + 1] = u16::from_be_bytes([v4[2], v4[3]]);
            count += 2;
            break;
        }
        if i == start {
            return Err(i);
        }
        pieces[count] = value as u16;
        count += 1;
        if i == s.len() {
            break;
        }
        if s[i] != b':' {
            return Err(i);
        }
        i += 1;
        if i < s.len() && s[i] == b':' {
            if gap.is_some() {
                return Err(i);
            }
            gap = Some(count);
            i += 1;
            if i == s.len() {
                break;
            }
        } else if i == s.len() {
            // A single trailing ':'.
            return Err(i - 1);
        }
    }

    match gap {
        None if count == 8 => Ok(pieces),
        None => Err(s.len()),
        // "::" must stand for at least one piece.
        Some(_) if count == 8 => Err(s.len()),
        Some(at) => {
            let tail = count - at;
            let moved = 8 - tail;
            pieces.copy_within(at..count, moved);
            pieces[at..moved].fill(0);
            Ok(pieces)
        }
    }
}

/// Checks `IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )`
/// (§3.2.2). The `v` may be upper-case: ABNF strings are case-insensitive.
///
/// # Errors
/// The offset of the first offending byte.
pub fn check_ipv_future(s: &[u8]) -> Result<(), usize> {
    if !matches!(s.first(), Some(b'v' | b'V')) {
        return Err(0);
    }
    let digits = s[1..]
        .iter()
        .take_while(|&&b| b.is_ascii_hexdigit())
        .count();
    if digits == 0 {
        return Err(1);
    }
    let dot = 1 + digits;
    if s.get(dot) != Some(&b'.') {
        return Err(dot);
    }
    let tail = &s[dot + 1..];
    if tail.is_empty() {
        return Err(s.len());
    }
    match tail.iter().position(|&b| !table::is(b, IPV_FUTURE)) {
        Some(p) => Err(dot + 1 + p),
        None => Ok(()),
    }
}

// Text forms of IP addresses, as normalization writes them.

/// Reads a host the way the WHATWG URL IPv4 parser does: one to four
/// dot-separated numbers, each decimal, octal (`0` prefix) or hex (`0x`),
/// the last one filling the remaining bytes; one trailing dot is allowed.
/// Returns `None` for anything else, including out-of-range values.
pub fn parse_ipv4_number_form(host: &[u8]) -> Option<u32> {
    let host = host.strip_suffix(b".").unwrap_or(host);
    if host.is_empty() {
        return None;
    }
    let mut parts = [0u64; 4];
    let mut count = 0;
    for part in host.split(|&b| b == b'.') {
        if count == 4 {
            return None;
        }
        parts[count] = parse_ipv4_number(part)?;
        count += 1;
    }
    let (last, init) = parts[..count].split_last()?;
    if init.iter().any(|&p| p > 255) {
        return None;
    }
    let last_bits = 8 * (5 - count as u32);
    if *last >= 1u64 << last_bits {
        return None;
    }
    let mut addr: u64 = 0;
    for (i, &p) in init.iter().enumerate() {
        addr |= p << (24 - 8 * i as u32);
    }
    Some((addr | last) as u32)
}

fn parse_ipv4_number(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let (digits, radix) = if s.len() >= 2 && s[0] == b'0' && (s[1] == b'x' || s[1] == b'X') {
        (&s[2..], 16)
    } else if s.len() >= 2 && s[0] == b'0' {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    let mut value: u64 = 0;
    for &b in digits {
        let d = u64::from(pct::hex_value(b)?);
        if d >= radix {
            return None;
        }
        value = value.checked_mul(radix)?.checked_add(d)?;
        if value > u64::from(u32::MAX) {
            return None;
        }
    }
    Some(value)
}

/// Writes an IPv4 address in dotted decimal.
pub(crate) fn write_ipv4(addr: u32, out: &mut Vec<u8>) {
    for (i, b) in addr.to_be_bytes().iter().enumerate() {
        if i > 0 {
            out.push(b'.');
        }
        write_decimal(u32::from(*b), out);
    }
}

fn write_decimal(v: u32, out: &mut Vec<u8>) {
    if v >= 10 {
        write_decimal(v / 10, out);
    }
    out.push(b'0' + (v % 10) as u8);
}

/// Writes eight IPv6 pieces in the RFC 5952 §4 text form (without
/// brackets). An IPv4-mapped address (`::ffff:0:0/96`) keeps its last 32
/// bits in dotted decimal (§5).
pub fn write_ipv6(p: &[u16; 8], out: &mut Vec<u8>) {
    if p[..5] == [0; 5] && p[5] == 0xffff {
        out.extend_from_slice(b"::ffff:");
        let [a, b] = p[6].to_be_bytes();
        let [c, d] = p[7].to_be_bytes();
        write_ipv4(u32::from_be_bytes([a, b, c, d]), out);
        return;
    }
    // Longest run of two or more zero pieces; the first one on a tie.
    let (mut best_at, mut best_len) = (8, 0);
    let mut i = 0;
    while i < 8 {
        if p[i] == 0 {
            let run = p[i..].iter().take_while(|&&x| x == 0).count();
            if run > best_len {
                (best_at, best_len) = (i, run);
            }
            i += run;
        } else {
            i += 1;
        }
    }
    if best_len < 2 {
        best_at = 8;
    }
    let mut i = 0;
    while i < 8 {
        if i == best_at {
            out.extend_from_slice(b"::");
            i += best_len;
            continue;
        }
        if i > 0 && i != best_at + best_len {
            out.push(b':');
        }
        write_hex_lower(p[i], out);
        i += 1;
    }
}

fn write_hex_lower(v: u16, out: &mut Vec<u8>) {
    let mut started = false;
    for shift in [12, 8, 4, 0] {
        let d = (v >> shift) & 0xf;
        if d != 0 || started || shift == 0 {
            started = true;
            out.push(pct::HEX_LOWER[d as usize]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_dec_octets() {
        assert_eq!(parse_ipv4(b"127.0.0.1"), Some([127, 0, 0, 1]));
        assert_eq!(parse_ipv4(b"255.255.255.255"), Some([255; 4]));
        assert_eq!(parse_ipv4(b"0.0.0.0"), Some([0; 4]));
        for bad in [
            "256.0.0.1",
            "127.0.0.01",
            "1.2.3",
            "1.2.3.4.",
            "1.2.3.4.5",
            "01.2.3.4",
            "",
            "a.b.c.d",
        ] {
            assert_eq!(parse_ipv4(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn ipv6_all_nine_forms() {
        let ok = [
            ("1:2:3:4:5:6:7:8", [1, 2, 3, 4, 5, 6, 7, 8]),
            ("1:2:3:4:5:6:1.2.3.4", [1, 2, 3, 4, 5, 6, 0x102, 0x304]),
            ("::2:3:4:5:6:7:8", [0, 2, 3, 4, 5, 6, 7, 8]),
            ("::", [0; 8]),
            ("::1", [0, 0, 0, 0, 0, 0, 0, 1]),
            ("1::", [1, 0, 0, 0, 0, 0, 0, 0]),
            ("1:2:3:4:5:6:7::", [1, 2, 3, 4, 5, 6, 7, 0]),
            ("1::8", [1, 0, 0, 0, 0, 0, 0, 8]),
            ("::ffff:1.2.3.4", [0, 0, 0, 0, 0, 0xffff, 0x102, 0x304]),
            ("1:2::1.2.3.4", [1, 2, 0, 0, 0, 0, 0x102, 0x304]),
            ("abcd:EF01::", [0xabcd, 0xef01, 0, 0, 0, 0, 0, 0]),
            ("1:2:3:4:5::1.2.3.4", [1, 2, 3, 4, 5, 0, 0x102, 0x304]),
        ];
        for (s, want) in ok {
            assert_eq!(parse_ipv6(s.as_bytes()), Ok(want), "{s}");
        }
        let bad = [
            "",
            ":",
            ":1",
            "1:",
            "1:2:3:4:5:6:7",
            "1:2:3:4:5:6:7:8:9",
            "1::2::3",
            ":::",
            "12345::",
            "1:2:3:4:5:6:7:8::",
            "1:2:3:4:5:6:7::8",
            "::1.2.3",
            "1.2.3.4",
            "::1.2.3.4:1",
            "1:2:3:4:5:6:7:1.2.3.4",
            "::256.1.1.1",
            "g::",
            "1:2:3:4:5:6::1.2.3.4",
        ];
        for s in bad {
            assert!(parse_ipv6(s.as_bytes()).is_err(), "{s}");
        }
    }

    #[test]
    fn ipv_future() {
        assert_eq!(check_ipv_future(b"v7.aB"), Ok(()));
        assert_eq!(check_ipv_future(b"VF.x:y"), Ok(()));
        assert_eq!(check_ipv_future(b"v.x"), Err(1));
        assert_eq!(check_ipv_future(b"v1x"), Err(2));
        assert_eq!(check_ipv_future(b"v1."), Err(3));
        assert_eq!(check_ipv_future(b"v1.a/b"), Err(4));
    }
}
