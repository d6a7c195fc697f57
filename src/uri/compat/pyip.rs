//! `ipaddress.ip_address()` of CPython 3.11: which strings it accepts and how
//! `str()` prints an IPv6 address (RFC 5952 compression, lowercase hex, the
//! scope kept as written, no dotted IPv4 tail).

/// An address `ip_address()` accepts.
pub(super) enum PyIp<'a> {
    V4,
    V6([u16; 8], Option<&'a str>),
}

/// `IPv4Address(s)`: four decimal octets, no leading zeros, each <= 255.
pub(super) fn parse_v4(s: &str) -> Option<u32> {
    let mut n = 0u32;
    let mut count = 0;
    for o in s.split('.') {
        count += 1;
        if count > 4 || o.is_empty() || o.len() > 3 || !o.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if o != "0" && o.starts_with('0') {
            return None;
        }
        let v: u32 = o.parse().ok()?;
        if v > 255 {
            return None;
        }
        n = n << 8 | v;
    }
    (count == 4).then_some(n)
}

fn hextet(p: &str) -> Option<u16> {
    if p.is_empty() || p.len() > 4 || !p.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(p, 16).ok()
}

/// `IPv6Address(s)`, scope id included.
pub(super) fn parse_v6(s: &str) -> Option<([u16; 8], Option<&str>)> {
    let (addr, scope) = match s.split_once('%') {
        None => (s, None),
        Some((_, "")) => return None,
        Some((_, z)) if z.contains('%') => return None,
        Some((a, z)) => (a, Some(z)),
    };
    if addr.is_empty() {
        return None;
    }
    let mut parts: Vec<&str> = addr.split(':').collect();
    if parts.len() < 3 {
        return None;
    }
    let mut tail = [0u16; 2];
    let mut has_v4 = false;
    if parts.last().is_some_and(|p| p.contains('.')) {
        let v4 = parse_v4(parts.pop()?)?;
        tail = [(v4 >> 16) as u16, v4 as u16];
        has_v4 = true;
    }
    let n = parts.len() + usize::from(has_v4) * 2;
    if n > 9 {
        return None;
    }
    let get = |i: usize| -> &str {
        if i < parts.len() {
            parts[i]
        } else {
            "x"
        }
    };
    let mut skip = None;
    for i in 1..n.saturating_sub(1) {
        if i < parts.len() && parts[i].is_empty() {
            if skip.is_some() {
                return None;
            }
            skip = Some(i);
        }
    }
    let value = |i: usize| -> Option<u16> {
        if i >= parts.len() {
            Some(tail[i - parts.len()])
        } else {
            hextet(parts[i])
        }
    };
    let mut out = [0u16; 8];
    if let Some(k) = skip {
        let mut hi = k;
        let mut lo = n - k - 1;
        if get(0).is_empty() {
            hi -= 1;
            if hi != 0 {
                return None;
            }
        }
        if !has_v4 && get(n - 1).is_empty() {
            lo -= 1;
            if lo != 0 {
                return None;
            }
        }
        if hi + lo >= 8 {
            return None;
        }
        for (i, slot) in out.iter_mut().enumerate().take(hi) {
            *slot = value(i)?;
        }
        for j in 0..lo {
            out[8 - lo + j] = value(n - lo + j)?;
        }
    } else {
        if n != 8 {
            return None;
        }
        for (i, slot) in out.iter_mut().enumerate() {
            *slot = value(i)?;
        }
    }
    Some((out, scope))
}

/// `ip_address(s)`: IPv4 first, then IPv6.
pub(super) fn ip_address(s: &str) -> Option<PyIp<'_>> {
    if parse_v4(s).is_some() {
        return Some(PyIp::V4);
    }
    parse_v6(s).map(|(a, z)| PyIp::V6(a, z))
}

/// `str(IPv6Address)`, appended to `out`.
pub(super) fn write_v6(a: &[u16; 8], scope: Option<&str>, out: &mut Vec<u8>) {
    // The longest run of zero pieces (the first one on ties), if longer than 1.
    let (mut best, mut best_len, mut cur, mut cur_len) = (0, 0, 0, 0);
    for (i, &p) in a.iter().enumerate() {
        if p == 0 {
            if cur_len == 0 {
                cur = i;
            }
            cur_len += 1;
            if cur_len > best_len {
                best = cur;
                best_len = cur_len;
            }
        } else {
            cur_len = 0;
        }
    }
    let mut i = 0;
    while i < 8 {
        if best_len > 1 && i == best {
            out.extend_from_slice(if i == 0 || i + best_len == 8 {
                b"::"
            } else {
                b":"
            });
            i += best_len;
            continue;
        }
        if i > 0 && !(best_len > 1 && i == best + best_len && best == 0) {
            out.push(b':');
        }
        let _ = std::io::Write::write_fmt(out, format_args!("{:x}", a[i]));
        i += 1;
    }
    if let Some(z) = scope {
        out.push(b'%');
        out.extend_from_slice(z.as_bytes());
    }
}
