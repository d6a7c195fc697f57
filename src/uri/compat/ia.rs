//! `surt.surt(url)` of surt 0.3.1 (default arguments), on CPython 3.11 and
//! glibc: the Internet Archive's CDX key, e.g. `com,example)/a?b=1`.
//!
//! The pipeline is the reference's: `handyurl.parse` (an RFC 2396 regex,
//! not `urlsplit`), then the Google canonicalizer (repeated unescaping,
//! IDNA 2003 for the host, numeric hosts as dotted quads, path dot
//! segments), then the IA canonicalizer (lowercase, `www` strip, session
//! ids, sorted query), then the SURT host form.

use super::bytes::{self, Set};
use super::unicode;
use super::{CompatError, Reason, SurtScratch};

/// What `escapeOnce` keeps: everything printable but `#`, `%` and space.
const ESCAPE_ONCE_SAFE: Set = {
    let mut t = [false; 256];
    let mut c = 0x21;
    while c < 0x7f {
        t[c] = c != b'#' as usize && c != b'%' as usize;
        c += 1;
    }
    t
};

/// `quote_from_bytes(safe=...)` of `escapeOnce`: the rest becomes `%HH`.
fn escape_once(s: &[u8], out: &mut Vec<u8>) {
    bytes::quote(s, &ESCAPE_ONCE_SAFE, out);
}

#[inline]
fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// `unescapeRepeatedly` (decode until nothing changes), in place, in one
/// pass: each decoded byte can only form a new escape with the two bytes
/// before it, and escapes never overlap, so decoding every escape as soon
/// as it is complete reaches the same fixed point as repeated full passes,
/// in linear time.
fn unescape_repeatedly(v: &mut Vec<u8>, tmp: &mut Vec<u8>) {
    if !v.contains(&b'%') {
        return;
    }
    tmp.clear();
    let mut i = 0;
    while i < v.len() {
        // An escape can only complete while a `%` is among the last two
        // bytes kept; otherwise the bytes up to the next `%` are copied whole.
        if !tmp[tmp.len().saturating_sub(2)..].contains(&b'%') && v[i] != b'%' {
            let n = memchr::memchr(b'%', &v[i..]).unwrap_or(v.len() - i);
            tmp.extend_from_slice(&v[i..i + n]);
            i += n;
            continue;
        }
        tmp.push(v[i]);
        i += 1;
        while let [.., b'%', h, l] = tmp[..] {
            let (Some(h), Some(l)) = (hex(h), hex(l)) else {
                break;
            };
            tmp.truncate(tmp.len() - 3);
            tmp.push(h << 4 | l);
        }
    }
    core::mem::swap(v, tmp);
}

/// glibc `inet_aton` on a string of digits and dots (what
/// `socket.gethostbyname_ex` does with a numeric name, no DNS involved).
fn inet_aton(s: &[u8]) -> Option<u32> {
    let mut parts = [0u32; 4];
    let mut n = 0;
    for (i, p) in s.split(|&b| b == b'.').enumerate() {
        if i >= 4 || p.is_empty() {
            return None;
        }
        let (digits, radix) = if p.len() > 1 && p[0] == b'0' {
            (&p[1..], 8)
        } else {
            (p, 10)
        };
        let mut v: u64 = 0;
        for &d in digits {
            let d = u64::from(d.wrapping_sub(b'0'));
            if d >= radix {
                return None;
            }
            v = v * radix + d;
            if v > 0xffff_ffff {
                return None;
            }
        }
        parts[i] = v as u32;
        n = i + 1;
    }
    let last = parts[n - 1];
    let (limit, head) = match n {
        1 => (u32::MAX, 0),
        2 => (0xff_ffff, parts[0] << 24),
        3 => (0xffff, parts[0] << 24 | parts[1] << 16),
        _ => (0xff, parts[0] << 24 | parts[1] << 16 | parts[2] << 8),
    };
    if parts[..n - 1].iter().any(|&p| p > 0xff) || last > limit {
        return None;
    }
    Some(head | last)
}

/// `^([1-9][0-9]*)(\.[0-9]+)?(\.[0-9]+)?(\.[0-9]+)?$` (`octal` false) or
/// `^(0[0-7]*)(\.[0-7]+)?(\.[0-7]+)?(\.[0-7]+)?$` (`octal` true).
fn numeric_shape(h: &[u8], octal: bool) -> bool {
    let digit = |b: &u8| {
        if octal {
            (b'0'..=b'7').contains(b)
        } else {
            b.is_ascii_digit()
        }
    };
    let mut parts = h.split(|&b| b == b'.');
    let Some(first) = parts.next() else {
        return false;
    };
    let first_ok = if octal {
        first.first() == Some(&b'0')
    } else {
        first.first().is_some_and(|b| (b'1'..=b'9').contains(b))
    };
    if !first_ok || !first.iter().all(digit) {
        return false;
    }
    let mut n = 1;
    for p in parts {
        n += 1;
        if n > 4 || p.is_empty() || !p.iter().all(digit) {
            return false;
        }
    }
    true
}

fn write_quad(ip: u32, out: &mut Vec<u8>) {
    let [a, b, c, d] = ip.to_be_bytes();
    let _ = std::io::Write::write_fmt(out, format_args!("{a}.{b}.{c}.{d}"));
}

/// `attemptIPFormats`: writes the dotted quad of a numeric host; false when
/// the host is not one.
fn attempt_ip(h: &[u8], out: &mut Vec<u8>) -> bool {
    if !h.is_empty() && h.iter().all(u8::is_ascii_digit) {
        // An integer, masked to its low 32 bits.
        let mut v: u32 = 0;
        for &d in h {
            v = v.wrapping_mul(10).wrapping_add(u32::from(d - b'0'));
        }
        write_quad(v, out);
        return true;
    }
    if numeric_shape(h, false) || numeric_shape(h, true) {
        // `gethostbyname_ex` resolves a numeric name itself (getaddrinfo:
        // inet_aton rules); an invalid one fails and the host stays.
        if let Some(ip) = inet_aton(h) {
            write_quad(ip, out);
            return true;
        }
    }
    false
}

/// `normalizePath` (the first segment is always dropped, `..` above the
/// root is kept, empty segments vanish except the last).
fn normalize_path(path: &[u8], out: &mut Vec<u8>, ends: &mut Vec<(usize, usize)>) {
    if path.is_empty() {
        out.push(b'/');
        return;
    }
    ends.clear();
    let mut start = 0;
    let mut first = true;
    let bytes = path;
    let mut i = 0;
    loop {
        let end = memchr::memchr(b'/', &bytes[i..]).map_or(bytes.len(), |p| i + p);
        let seg = &bytes[start..end];
        if first {
            first = false;
        } else if seg == b"." {
        } else if seg == b".." {
            if ends.pop().is_none() {
                ends.push((start, end));
            }
        } else {
            ends.push((start, end));
        }
        if end == bytes.len() {
            break;
        }
        start = end + 1;
        i = start;
    }
    out.push(b'/');
    if let Some((&(ls, le), rest)) = ends.split_last() {
        for &(s, e) in rest {
            if e > s {
                out.extend_from_slice(&path[s..e]);
                out.push(b'/');
            }
        }
        out.extend_from_slice(&path[ls..le]);
    }
}

/// Longest-prefix (greedy `^(.*)`) search for `^(.*)X(?:&(.*))?$`, where
/// `X` has its first `=` at offset `eq_at`: the candidates are the `=`
/// bytes, right to left. `m` gets the bytes from a candidate position and
/// the distance to the next `&`, and returns the length of `X`; `q` is
/// rewritten as the reference does.
fn strip_query_id(
    q: &mut Vec<u8>,
    eq_at: usize,
    m: impl Fn(&[u8], usize) -> Option<usize>,
    tmp: &mut Vec<u8>,
) {
    let mut next_amp = q.len();
    // `&` bytes at or after `scanned` are accounted for in `next_amp`.
    let mut scanned = q.len();
    for eq in memchr::memrchr_iter(b'=', q) {
        let Some(p) = eq.checked_sub(eq_at) else {
            break;
        };
        if p < scanned {
            if let Some(a) = memchr::memchr(b'&', &q[p..scanned]) {
                next_amp = p + a;
            }
            scanned = p;
        }
        let Some(len) = m(&q[p..], next_amp - p) else {
            continue;
        };
        let e = p + len;
        if e == q.len() || q[e] == b'&' {
            tmp.clear();
            tmp.extend_from_slice(&q[..p]);
            if e < q.len() {
                tmp.extend_from_slice(&q[e + 1..]);
            }
            core::mem::swap(q, tmp);
            return;
        }
    }
}

fn lit(s: &[u8], l: &[u8]) -> bool {
    s.len() >= l.len() && s[..l.len()].eq_ignore_ascii_case(l)
}

fn run(s: &[u8], n: usize, f: impl Fn(&u8) -> bool) -> bool {
    s.len() >= n && s[..n].iter().all(f)
}

fn strip_query_ids(q: &mut Vec<u8>, tmp: &mut Vec<u8>) {
    for key in [&b"jsessionid="[..], b"phpsessid=", b"sid="] {
        strip_query_id(
            q,
            key.len() - 1,
            |s, _| {
                (lit(s, key) && run(&s[key.len()..], 32, u8::is_ascii_alphanumeric))
                    .then_some(key.len() + 32)
            },
            tmp,
        );
    }
    strip_query_id(
        q,
        20,
        |s, _| {
            (lit(s, b"aspsessionid")
                && run(&s[12..], 8, u8::is_ascii_alphabetic)
                && s.get(20) == Some(&b'=')
                && run(&s[21..], 24, u8::is_ascii_alphabetic))
            .then_some(45)
        },
        tmp,
    );
    strip_query_id(
        q,
        4,
        |s, amp| {
            // `cfid=[^&]+&cftoken=[^&]+`: the runs end at the next `&`.
            if amp <= 5 || !lit(s, b"cfid=") || !lit(&s[amp..], b"&cftoken=") {
                return None;
            }
            let b = amp + 9 + s[amp + 9..].iter().take_while(|&&b| b != b'&').count();
            (b > amp + 9).then_some(b)
        },
        tmp,
    );
}

/// The two `stripPathSessionID` patterns, `^(.*/)(ID/)([^?]+\.aspx.*)$`.
fn strip_path_ids(path: &mut Vec<u8>, tmp: &mut Vec<u8>) {
    // Both patterns need `/(`.
    if memchr::memmem::find(path, b"/(").is_none() {
        return;
    }
    let nested = |s: &[u8]| -> Option<usize> {
        // `\((?:[a-z]\([0-9a-z]{24}\))+\)/`
        if s.first() != Some(&b'(') {
            return None;
        }
        let mut i = 1;
        let mut groups = 0;
        while s.get(i).is_some_and(u8::is_ascii_alphabetic)
            && s.get(i + 1) == Some(&b'(')
            && run(s.get(i + 2..)?, 24, u8::is_ascii_alphanumeric)
            && s.get(i + 26) == Some(&b')')
        {
            i += 27;
            groups += 1;
        }
        (groups > 0 && s.get(i) == Some(&b')') && s.get(i + 1) == Some(&b'/')).then_some(i + 2)
    };
    let flat = |s: &[u8]| -> Option<usize> {
        // `\([0-9a-z]{24}\)/`
        (s.first() == Some(&b'(')
            && run(s.get(1..)?, 24, u8::is_ascii_alphanumeric)
            && s.get(25) == Some(&b')')
            && s.get(26) == Some(&b'/'))
        .then_some(27)
    };
    let tail_ok = |r: &[u8]| -> bool {
        // `[^?]+\.aspx.*`: ".aspx" after at least one byte, no `?` before it.
        let stop = r.iter().position(|&b| b == b'?').unwrap_or(r.len());
        (1..stop.min(r.len())).any(|k| lit(&r[k..], b".aspx"))
    };
    for id in [&nested as &dyn Fn(&[u8]) -> Option<usize>, &flat] {
        for p in (1..=path.len()).rev() {
            if path[p - 1] != b'/' {
                continue;
            }
            let Some(n) = id(&path[p..]) else { continue };
            if tail_ok(&path[p + n..]) {
                tmp.clear();
                tmp.extend_from_slice(&path[..p]);
                tmp.extend_from_slice(&path[p + n..]);
                core::mem::swap(path, tmp);
                break;
            }
        }
    }
}

/// `alphaReorderQuery`: sorts the `&`-separated arguments as tuples
/// (`a` sorts before `a=`), keeping each as written.
fn reorder_query(q: &[u8], out: &mut Vec<u8>, args: &mut Vec<(usize, usize)>) {
    if q.len() <= 1 {
        out.extend_from_slice(q);
        return;
    }
    args.clear();
    let mut start = 0;
    for (i, &b) in q.iter().enumerate() {
        if b == b'&' {
            args.push((start, i));
            start = i + 1;
        }
    }
    args.push((start, q.len()));
    let split = |&(s, e): &(usize, usize)| {
        let a = &q[s..e];
        match a.iter().position(|&b| b == b'=') {
            Some(i) => (&a[..i], Some(&a[i + 1..])),
            None => (a, None),
        }
    };
    args.sort_by(|x, y| split(x).cmp(&split(y)));
    for (n, &(s, e)) in args.iter().enumerate() {
        if n > 0 {
            out.push(b'&');
        }
        out.extend_from_slice(&q[s..e]);
    }
}

/// Appends the SURT of `input` to `out`.
pub(super) fn write_key(
    input: &str,
    out: &mut Vec<u8>,
    s: &mut SurtScratch,
) -> Result<(), CompatError> {
    let raw = input.as_bytes();
    if raw.is_empty() {
        out.push(b'-');
        return Ok(());
    }
    if raw.starts_with(b"filedesc") {
        out.extend_from_slice(raw);
        return Ok(());
    }
    // `bytes.strip()` (ASCII whitespace), then every tab, CR and LF goes.
    let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let lead = raw.iter().take_while(|b| space(b)).count();
    let t = &raw[lead..];
    let t = &t[..t.len() - t.iter().rev().take_while(|b| space(b)).count()];
    let err = |reason| CompatError::new(lead, reason);
    if t.is_empty() {
        // The reference reads `None.startswith` here.
        return Err(err(Reason::EmptyUrl));
    }
    s.url.clear();
    s.url.extend_from_slice(b"http://");
    if memchr::memchr3(b'\t', b'\n', b'\r', t).is_none() {
        s.url.extend_from_slice(t);
    } else {
        s.url.extend(
            t.iter()
                .copied()
                .filter(|b| !matches!(b, b'\t' | b'\n' | b'\r')),
        );
    }
    // A scheme is looked for after the tabs and newlines are gone.
    let u = &s.url[7..];
    let n = u
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
        .count();
    if u.first().is_some_and(u8::is_ascii_alphabetic) && u.get(n) == Some(&b':') {
        s.url.drain(..7);
    }
    // `^(https?://)+` becomes its last repetition.
    let mut cut = 0;
    let mut last = 0;
    loop {
        let rest = &s.url[cut..];
        let n = if rest.starts_with(b"https://") {
            8
        } else if rest.starts_with(b"http://") {
            7
        } else {
            break;
        };
        last = cut;
        cut += n;
    }
    if last > 0 {
        s.url.drain(..last);
    }
    let url = &s.url[..];

    // The RFC 2396 regex.
    let n = url
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
        .count();
    let (scheme, rest) =
        if url.first().is_some_and(u8::is_ascii_alphabetic) && url.get(n) == Some(&b':') {
            (&url[..n], &url[n + 1..])
        } else {
            (&b""[..], url)
        };
    let (before_frag, fragment) = match memchr::memchr(b'#', rest) {
        Some(h) => (&rest[..h], Some(&rest[h + 1..])),
        None => (rest, None),
    };
    let _ = fragment;
    let (netloc, rest) = if let Some(r) = before_frag.strip_prefix(b"//") {
        let e = memchr::memchr2(b'/', b'?', r).unwrap_or(r.len());
        (&r[..e], &r[e..])
    } else {
        (&b""[..], before_frag)
    };
    let (path, query) = match memchr::memchr(b'?', rest) {
        Some(q) => (&rest[..q], &rest[q + 1..]),
        None => (rest, &b""[..]),
    };
    // A netloc ending in `:` loses every trailing `:`.
    let mut netloc = netloc;
    while let [head @ .., b':'] = netloc {
        netloc = head;
    }
    let hostinfo = match netloc.iter().rposition(|&b| b == b'@') {
        Some(i) => &netloc[i + 1..],
        None => netloc,
    };
    let (hostname, port) = match hostinfo.iter().position(|&b| b == b'[') {
        Some(i) => {
            let b = &hostinfo[i + 1..];
            match b.iter().position(|&c| c == b']') {
                Some(j) => {
                    let p = &b[j + 1..];
                    (
                        &b[..j],
                        p.iter()
                            .position(|&c| c == b':')
                            .map_or(&b""[..], |k| &p[k + 1..]),
                    )
                }
                None => (b, &b""[..]),
            }
        }
        None => match hostinfo.iter().position(|&b| b == b':') {
            Some(i) => (&hostinfo[..i], &hostinfo[i + 1..]),
            None => (hostinfo, &b""[..]),
        },
    };
    let mut port_num: Option<u32> = None;
    if !port.is_empty() {
        if !port.iter().all(u8::is_ascii_digit) {
            return Err(err(Reason::InvalidPort));
        }
        let digits = port
            .iter()
            .position(|&b| b != b'0')
            .map_or(&b""[..], |i| &port[i..]);
        if digits.len() > 5 {
            return Err(err(Reason::InvalidPort));
        }
        let v = digits
            .iter()
            .fold(0u32, |v, &d| v * 10 + u32::from(d - b'0'));
        if v > 65535 {
            return Err(err(Reason::InvalidPort));
        }
        port_num = (v != 0).then_some(v);
    }
    // The host (lowercased up to a `%`) and the path.
    s.host.clear();
    let mut have_host = !hostname.is_empty();
    if have_host {
        let z = hostname
            .iter()
            .position(|&b| b == b'%')
            .unwrap_or(hostname.len());
        s.host.extend_from_slice(hostname);
        s.host[..z].make_ascii_lowercase();
    }
    s.path.clear();
    s.path.extend_from_slice(path);
    let mut have_path = !path.is_empty();
    if scheme.starts_with(b"http") && !have_host && have_path {
        // "http:////host/path": the host is the first non-empty segment.
        let p = path
            .iter()
            .position(|&b| b != b'/')
            .map_or(&b""[..], |i| &path[i..]);
        let (h, r) = match p.iter().position(|&b| b == b'/') {
            Some(i) => (&p[..i], &p[i + 1..]),
            None => (p, &b""[..]),
        };
        s.host.extend_from_slice(h);
        have_host = true;
        s.path.clear();
        s.path.push(b'/');
        s.path.extend_from_slice(r);
        have_path = true;
    }

    // Google canonicalizer: query.
    s.query.clear();
    let have_query = !query.is_empty();
    if have_query {
        s.tmp.clear();
        s.tmp.extend_from_slice(query);
        unescape_repeatedly(&mut s.tmp, &mut s.tmp2);
        escape_once(&s.tmp, &mut s.query);
    }
    // Host.
    let mut host_ok = false;
    if have_host && !s.host.is_empty() {
        unescape_repeatedly(&mut s.host, &mut s.tmp2);
        if !s.host.is_ascii() {
            s.text.clear();
            for chunk in s.host.utf8_chunks() {
                s.text.push_str(chunk.valid());
            }
            s.tmp.clear();
            if unicode::idna_encode(&s.text, &mut s.tmp, &mut s.idna).is_ok() {
                core::mem::swap(&mut s.host, &mut s.tmp);
            }
        }
        // `replace(b'..', b'.')` (one pass), then `strip(b'.')`.
        s.tmp.clear();
        let mut i = 0;
        while i < s.host.len() {
            if s.host[i] == b'.' && s.host.get(i + 1) == Some(&b'.') {
                s.tmp.push(b'.');
                i += 2;
            } else {
                s.tmp.push(s.host[i]);
                i += 1;
            }
        }
        let a = s.tmp.iter().position(|&b| b != b'.').unwrap_or(s.tmp.len());
        let e = s.tmp.iter().rposition(|&b| b != b'.').map_or(a, |i| i + 1);
        s.host.clear();
        if !attempt_ip(&s.tmp[a..e], &mut s.host) {
            s.tmp[a..e].make_ascii_lowercase();
            escape_once(&s.tmp[a..e], &mut s.host);
        }
        host_ok = !s.host.is_empty();
    }
    // Path.
    if have_path || host_ok {
        unescape_repeatedly(&mut s.path, &mut s.tmp2);
        s.tmp.clear();
        if host_ok {
            normalize_path(&s.path, &mut s.tmp, &mut s.ends);
        } else {
            s.tmp.extend_from_slice(&s.path);
        }
        s.path.clear();
        escape_once(&s.tmp, &mut s.path);
    }

    // IA canonicalizer.
    // The host is lowercased after escaping, hex digits included.
    s.host.make_ascii_lowercase();
    if host_ok && scheme != b"dns" {
        let h = &s.host;
        let d = h.iter().take(3).eq(b"www".iter()) && {
            let n = 3 + h[3..].iter().take_while(|b| b.is_ascii_digit()).count();
            h.get(n) == Some(&b'.')
        };
        if d {
            let n = 3 + h[3..].iter().take_while(|b| b.is_ascii_digit()).count();
            s.host.drain(..=n);
        }
    }
    let default_port = if scheme.eq_ignore_ascii_case(b"http") {
        80
    } else if scheme.eq_ignore_ascii_case(b"https") {
        443
    } else {
        0
    };
    if port_num == Some(default_port) {
        port_num = None;
    }
    if !s.path.is_empty() {
        s.path.make_ascii_lowercase();
        strip_path_ids(&mut s.path, &mut s.tmp);
        if s.path.len() > 1 && s.path.ends_with(b"/") {
            s.path.pop();
        }
    }
    let mut query_out = false;
    if !s.query.is_empty() {
        strip_query_ids(&mut s.query, &mut s.tmp);
        s.query.make_ascii_lowercase();
        s.tmp.clear();
        reorder_query(&s.query, &mut s.tmp, &mut s.ends);
        core::mem::swap(&mut s.query, &mut s.tmp);
        query_out = !s.query.is_empty();
    }

    // `geturl_bytes(surt=True, with_scheme=False)`.
    if s.host.is_empty() {
        out.extend_from_slice(scheme);
        out.push(b':');
    } else {
        for (n, label) in s.host.rsplit(|&b| b == b'.').enumerate() {
            if n > 0 {
                out.push(b',');
            }
            out.extend_from_slice(label);
        }
        if let Some(p) = port_num {
            let _ = std::io::Write::write_fmt(out, format_args!(":{p}"));
        }
        out.push(b')');
    }
    if !s.path.is_empty() {
        out.extend_from_slice(&s.path);
    } else if query_out {
        out.push(b'/');
    }
    if query_out {
        out.push(b'?');
        out.extend_from_slice(&s.query);
    }
    Ok(())
}
