//! The fast tier of [`uri_key`](super::Keyer::uri_key): one pass
//! over a `scheme://[userinfo@]host[:port]/path?query#frag` line that
//! checks it and applies the normalization rules straight from its bytes.
//! The web schemes (`http`, `https`, `ws`, `wss`, `ftp`) and `file` are
//! matched as one word; any other scheme followed by `://` gets the rules
//! of the scheme table (or none).
//!
//! Most crawl URLs are already canonical; many others are another spelling
//! of one (`HTTP://Example.COM:80/%7euser`). The general path parses into
//! offsets, then the [`Normalizer`](crate::uri::normalize::Normalizer)
//! walks every component again and writes a copy. This writer reads each
//! byte once, eight at a time where it can, and writes nothing until the
//! first change: a canonical line is its own key, and a changed one is
//! written from its unchanged runs and the edits ([`CopyOnWrite`]).
//!
//! It hands anything it does not cover to the general path (`None`): a
//! reference without `://` (relative, `urn:`, `mailto:`...), an IPvFuture
//! literal, a host byte outside `ALPHA DIGIT - . _ ~`, any invalid byte or
//! escape, and, under the crawl host rules, a reg-name host they might
//! rewrite. It is on only for flag sets within `FAST_SAFE`; the tests check
//! that it writes exactly what the general path writes.

#[cfg(target_arch = "x86_64")]
pub(super) mod avx2;
#[cfg(target_arch = "x86_64")]
pub(super) mod avx512;
pub(super) mod masks;
pub(super) mod scalar;

use crate::uri::host;
use crate::uri::host::write_ipv6;
use crate::uri::normalize::{strip_port_zeros, Flag, Flags};
use crate::uri::path::remove_dot_segments_in_place;
use crate::uri::pct;
use crate::uri::scheme;
use crate::uri::table;
use scalar::{hex, Scan, F_HOST, F_HOST_ANY, F_PATH_PLAIN, F_QUERY_PLAIN, F_USERINFO, LOWER_HEX};

/// The flags of one canonicalizer, read once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct FastWriter {
    enabled: bool,
    lowercase_scheme: bool,
    lowercase_host: bool,
    upper: bool,
    decode: bool,
    dot_segments: bool,
    empty_port: bool,
    default_port: bool,
    port_zeros: bool,
    empty_path_slash: bool,
    remove_fragment: bool,
    remove_empty_query: bool,
    ipv6_canonical: bool,
    /// `ipv4-canonical`, `idna` or `remove-trailing-host-dot` is on: hosts
    /// those rules could rewrite go to the general path.
    host_rules: bool,
}

impl FastWriter {
    /// The writer for `flags`; `enabled` says whether the flags allow it.
    pub(super) fn new(flags: Flags, enabled: bool) -> Self {
        Self {
            enabled,
            lowercase_scheme: flags.has(Flag::LowercaseScheme),
            lowercase_host: flags.has(Flag::LowercaseHost),
            upper: flags.has(Flag::UppercaseEscapes),
            decode: flags.has(Flag::DecodeUnreserved),
            dot_segments: flags.has(Flag::RemoveDotSegments),
            empty_port: flags.has(Flag::RemoveEmptyPort),
            default_port: flags.has(Flag::RemoveDefaultPort),
            port_zeros: flags.has(Flag::PortLeadingZeros),
            empty_path_slash: flags.has(Flag::EmptyPathSlash),
            remove_fragment: flags.has(Flag::RemoveFragment),
            remove_empty_query: flags.has(Flag::RemoveEmptyQuery),
            ipv6_canonical: flags.has(Flag::Ipv6Canonical),
            host_rules: flags.has(Flag::Ipv4Canonical)
                || flags.has(Flag::Idna)
                || flags.has(Flag::RemoveTrailingHostDot),
        }
    }

    /// Is the writer on?
    #[inline(always)]
    pub(super) fn enabled(&self) -> bool {
        self.enabled
    }

    /// The key of `s`: a prefix of `s` (nothing to rewrite but a dropped
    /// fragment) or the bytes written to `out`. `None`: `s` is not a line
    /// this writer covers (it may still be valid).
    ///
    /// The line is scanned once; while it needs no change nothing is
    /// written, and positions in `out` equal positions in `s`. The first
    /// change copies the clean prefix to `out` (see [`CopyOnWrite`]).
    #[inline(always)]
    pub(super) fn key<S: Scan>(&self, sc: S, s: &[u8], out: &mut Vec<u8>) -> Option<Written> {
        if s.len() >= u32::MAX as usize {
            return None; // the parser's TooLong error
        }
        let mut w = CopyOnWrite {
            s,
            out,
            from: 0,
            dirty: false,
        };
        let web = s
            .first_chunk::<8>()
            .and_then(|head| scheme_of(u64::from_le_bytes(*head)));
        let (n, default_port, slash_path) = match web {
            Some((known, lower)) => {
                if self.lowercase_scheme && !lower {
                    w.edit(0, known.name.len(), known.name);
                }
                (known.name.len(), known.port, known.empty_path_is_slash)
            }
            None => self.other_scheme(&mut w)?,
        };
        let empty_path_slash = self.empty_path_slash && slash_path;

        // Authority. Userinfo is rare: it is looked for only when the
        // authority read as host and port does not end where it should.
        let mark = w.mark();
        let mut i = match self.host_port(sc, &mut w, n + 3, default_port) {
            Some(i) => i,
            None => {
                w.reset(mark);
                let at = self.userinfo(sc, &mut w, n + 3)?;
                self.host_port(sc, &mut w, at + 1, default_port)?
            }
        };

        // Path: path-abempty. `out_path` is where it starts in the key.
        let path_start = i;
        w.flush(path_start);
        let out_path = if w.dirty { w.out.len() } else { path_start };
        // Where the first dot segment may start in the key: the segments
        // before it are already in place.
        let mut first_dot = None;
        loop {
            i = sc.skip::<F_PATH_PLAIN>(s, i);
            match s.get(i) {
                Some(b'.') => {
                    // s[i - 1] is in the path: it starts with '/'.
                    if first_dot.is_none()
                        && s[i - 1] == b'/'
                        && (segment_ends(s, i + 1)
                            || (s.get(i + 1) == Some(&b'.') && segment_ends(s, i + 2)))
                    {
                        first_dot = Some(w.key_len(i - 1));
                    }
                    i += 1;
                }
                Some(b'%') => loop {
                    // A decoded '.' may complete a dot segment that starts
                    // anywhere before it. Escapes often come in runs
                    // (UTF-8): no scan between them.
                    if self.escape(&mut w, i, true)? == b'.' {
                        first_dot = Some(out_path);
                    }
                    i += 3;
                    if s.get(i) != Some(&b'%') {
                        break;
                    }
                },
                _ => break,
            }
        }
        if !matches!(s.get(i), None | Some(b'?' | b'#')) {
            return None;
        }
        if let Some(from) = first_dot.filter(|_| self.dot_segments) {
            // Literal dot segments were found exactly; a decoded '.' may
            // make one, which the removal finds itself.
            let out = w.written_to(i);
            remove_dot_segments_in_place(out, out_path, from);
            if empty_path_slash && out.len() == out_path {
                out.push(b'/');
            }
        } else if empty_path_slash && i == path_start {
            w.edit(i, i, b"/");
        }

        // Query.
        if s.get(i) == Some(&b'?') {
            let question = i;
            i = self.escaped(sc, &mut w, i + 1, true)?;
            if self.remove_empty_query && i == question + 1 {
                w.edit(question, i, b"");
            }
        }

        // Fragment: checked even when it is dropped.
        let mut end = s.len();
        if s.get(i) == Some(&b'#') {
            let hash = i;
            i = self.escaped(sc, &mut w, i + 1, !self.remove_fragment)?;
            if self.remove_fragment {
                end = hash;
            }
        }
        if i != s.len() {
            return None;
        }
        if !w.dirty {
            return Some(Written::Prefix(end));
        }
        w.flush(end);
        Some(Written::Out)
    }

    /// Reads a scheme other than the ones [`scheme_of`] matches, followed
    /// by `://`: returns its length, default port and whether an empty path
    /// is `/` for it.
    #[inline(never)]
    fn other_scheme(&self, w: &mut CopyOnWrite<'_>) -> Option<(usize, Option<u16>, bool)> {
        let s = w.s;
        if !s.first()?.is_ascii_alphabetic() {
            return None;
        }
        let n = s
            .iter()
            .position(|&b| !table::is(b, table::SCHEME_CHAR))
            .unwrap_or(s.len());
        if s.get(n..n + 3) != Some(b"://") {
            return None;
        }
        if self.lowercase_scheme && s[..n].iter().any(u8::is_ascii_uppercase) {
            let out = w.written_to(0);
            out.extend_from_slice(&s[..n]);
            out.make_ascii_lowercase();
            w.from = n;
        }
        let info = scheme::lookup(&s[..n]);
        Some((
            n,
            info.and_then(|i| i.default_port),
            info.is_some_and(|i| i.empty_path_is_slash),
        ))
    }

    /// Reads `host[:port]` from `s[start]` and applies the host and port
    /// rules; returns where the authority ends, which must be the end or a
    /// `/`, `?` or `#` (`None` otherwise, or for a host this writer leaves
    /// to the general path).
    #[inline(always)]
    fn host_port<S: Scan>(
        &self,
        sc: S,
        w: &mut CopyOnWrite<'_>,
        start: usize,
        default_port: Option<u16>,
    ) -> Option<usize> {
        let s = w.s;
        // A run of lower-case host bytes needs no change; anything else is
        // rewritten by `host` (or `ip_literal`).
        let mut i = sc.skip::<F_HOST>(s, start);
        match s.get(i) {
            Some(b'A'..=b'Z' | b'%') => {
                i = self.host(sc, s, start, w.written_to(start))?;
                w.from = i;
            }
            Some(b'[') if i == start => i = self.ip_literal(w, start)?,
            _ => self.check_host(&s[start..i], false)?,
        }

        // Port: `*DIGIT` (§3.2.3).
        if s.get(i) == Some(&b':') {
            let colon = i;
            i += 1;
            while s.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            let port = &s[colon + 1..i];
            let drop = if port.is_empty() {
                self.empty_port
            } else {
                self.default_port && default_port.is_some_and(|d| scheme::is_port(port, d))
            };
            if drop {
                w.edit(colon, i, b"");
            } else if self.port_zeros && port.len() > 1 && port[0] == b'0' {
                let kept = strip_port_zeros(port).len();
                w.edit(colon + 1, i - kept, b"");
            }
        }
        matches!(s.get(i), None | Some(b'/' | b'?' | b'#')).then_some(i)
    }

    /// Reads `userinfo "@"` from `s[start]` (escape rules only, no case
    /// change); returns the index of the `@`.
    #[inline(never)]
    fn userinfo<S: Scan>(&self, sc: S, w: &mut CopyOnWrite<'_>, start: usize) -> Option<usize> {
        let mut i = start;
        loop {
            i = sc.skip::<F_USERINFO>(w.s, i);
            if w.s.get(i) != Some(&b'%') {
                break;
            }
            self.escape(w, i, true)?;
            i += 3;
        }
        (w.s.get(i) == Some(&b'@')).then_some(i)
    }

    /// Reads an IPv6 literal `[...]` from `s[start]`; returns where it
    /// ends. An IPvFuture literal is the general path's.
    #[inline(never)]
    fn ip_literal(&self, w: &mut CopyOnWrite<'_>, start: usize) -> Option<usize> {
        let s = w.s;
        let close = start + s.get(start..)?.iter().position(|&b| b == b']')?;
        let inner = s.get(start + 1..close)?;
        if matches!(inner.first(), Some(b'v' | b'V')) {
            return None;
        }
        let pieces = host::parse_ipv6(inner).ok()?;
        let end = close + 1;
        if self.ipv6_canonical {
            let out = w.written_to(start);
            out.push(b'[');
            write_ipv6(&pieces, out);
            out.push(b']');
            w.from = end;
        } else if self.lowercase_host && inner.iter().any(u8::is_ascii_uppercase) {
            let out = w.written_to(start);
            let at = out.len();
            out.extend_from_slice(&s[start..end]);
            out[at..].make_ascii_lowercase();
            w.from = end;
        }
        Some(end)
    }

    /// Checks a host written as it stays against the crawl host rules
    /// (when they are on): `idna` reads escapes, `ipv4-canonical` reads
    /// number-like hosts, whose last label starts with a digit, and
    /// `remove-trailing-host-dot` reads the last byte. None of them
    /// changes an empty host.
    #[inline(always)]
    fn check_host(&self, host: &[u8], kept_escape: bool) -> Option<()> {
        let Some(&last) = host.last() else {
            return Some(());
        };
        if self.host_rules {
            let label = host.iter().rposition(|&b| b == b'.').map_or(0, |p| p + 1);
            if kept_escape || last == b'.' || host.get(label).is_some_and(u8::is_ascii_digit) {
                return None;
            }
        }
        Some(())
    }

    /// Handles the escape at `s[i]` (checked): rewrites it when the escape
    /// rules change it and `write` is set. Returns the octet it encodes.
    #[inline(always)]
    fn escape(&self, w: &mut CopyOnWrite<'_>, i: usize, write: bool) -> Option<u8> {
        let (&h, &l) = (w.s.get(i + 1)?, w.s.get(i + 2)?);
        let (hv, lv) = (hex(h), hex(l));
        if (hv | lv) & 16 != 0 {
            return None; // not two hex digits
        }
        let byte = (hv & 15) << 4 | (lv & 15);
        if !write {
            return Some(byte);
        }
        if self.decode && table::is_unreserved(byte) {
            w.edit(i, i + 3, &[byte]);
        } else if self.upper && (hv | lv) & LOWER_HEX != 0 {
            w.edit(i, i + 3, &pct::encoded(byte));
        }
        Some(byte)
    }

    /// Scans a query or fragment from `s[i]`: returns the index of the first
    /// byte that is neither a query byte nor an escape (or the end).
    #[inline(always)]
    fn escaped<S: Scan>(
        &self,
        sc: S,
        w: &mut CopyOnWrite<'_>,
        mut i: usize,
        write: bool,
    ) -> Option<usize> {
        loop {
            i = sc.skip::<F_QUERY_PLAIN>(w.s, i);
            if w.s.get(i) != Some(&b'%') {
                return Some(i);
            }
            // Escapes often come in runs (UTF-8): no scan between them.
            while w.s.get(i) == Some(&b'%') {
                self.escape(w, i, write)?;
                i += 3;
            }
        }
    }

    /// Writes the host that starts at `s[i]`; returns where it ends.
    #[inline(always)]
    fn host<S: Scan>(&self, sc: S, s: &[u8], mut i: usize, out: &mut Vec<u8>) -> Option<usize> {
        let start = out.len();
        let mut kept_escape = false;
        loop {
            let j = sc.skip::<F_HOST_ANY>(s, i);
            let run = out.len();
            out.extend_from_slice(&s[i..j]);
            if self.lowercase_host {
                out[run..].make_ascii_lowercase();
            }
            i = j;
            if s.get(i) != Some(&b'%') {
                break;
            }
            let (h, l, byte) = escape_at(s, i)?;
            if self.decode && table::is_unreserved(byte) {
                out.push(if self.lowercase_host {
                    byte.to_ascii_lowercase()
                } else {
                    byte
                });
            } else {
                kept_escape = true;
                self.push_escape(h, l, byte, out);
            }
            i += 3;
        }
        self.check_host(&out[start..], kept_escape)?;
        Some(i)
    }

    /// Writes an escape that stays encoded.
    #[inline(always)]
    fn push_escape(&self, h: u8, l: u8, byte: u8, out: &mut Vec<u8>) {
        if self.upper {
            pct::push_encoded(byte, out);
        } else {
            out.extend_from_slice(&[b'%', h, l]);
        }
    }
}

/// The scheme at the start of a line whose first eight bytes are `head`
/// (little-endian), if it is `http`, `https`, `ws`, `wss`, `ftp` or `file`
/// (in any case) followed by `://`, and whether it is written in lower
/// case. `file` is not in the scheme table, so it gets no scheme rule, as
/// [`FastWriter::other_scheme`] would give it; it is matched here
/// because it is common (a third of the lines of the shared real lists'
/// dump), and the general scheme reading cost those lines about 120
/// instructions each.
#[inline(always)]
fn scheme_of(head: u64) -> Option<(&'static WordScheme, bool)> {
    // Names and default ports come from the one scheme table.
    const SCHEMES: [WordScheme; 6] = [
        WordScheme::of(scheme::HTTP),
        WordScheme::of(scheme::HTTPS),
        WordScheme::without_rules("file"),
        WordScheme::of(scheme::FTP),
        WordScheme::of(scheme::WS),
        WordScheme::of(scheme::WSS),
    ];
    SCHEMES
        .iter()
        .find_map(|w| ((head | w.fold) & w.mask == w.word).then_some((w, head & w.mask == w.word)))
}

/// A scheme `scheme_of` knows, as a pattern over a line's first word.
struct WordScheme {
    name: &'static [u8],
    /// Its default port.
    port: Option<u16>,
    /// An empty path after the authority means `/`.
    empty_path_is_slash: bool,
    /// `name` + "://", little-endian.
    word: u64,
    /// The bytes of `word`.
    mask: u64,
    /// The case bit of the letters of `name`.
    fold: u64,
}

impl WordScheme {
    /// The pattern of a scheme of the scheme table.
    const fn of(info: scheme::SchemeInfo) -> Self {
        Self::new(info.name, info.default_port, info.empty_path_is_slash)
    }

    /// The pattern of a scheme the scheme table does not have: no scheme
    /// rule applies to it.
    const fn without_rules(name: &'static str) -> Self {
        Self::new(name, None, false)
    }

    /// The pattern of `name` (at most five letters).
    const fn new(name: &'static str, port: Option<u16>, empty_path_is_slash: bool) -> Self {
        let name = name.as_bytes();
        let mut word = [0u8; 8];
        let mut i = 0;
        while i < name.len() {
            word[i] = name[i];
            i += 1;
        }
        word[i] = b':';
        word[i + 1] = b'/';
        word[i + 2] = b'/';
        Self {
            name,
            port,
            empty_path_is_slash,
            word: u64::from_le_bytes(word),
            mask: u64::MAX >> (64 - 8 * (name.len() + 3)),
            fold: 0x2020_2020_2020_2020 >> (64 - 8 * name.len()),
        }
    }
}

/// What [`FastWriter::key`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Written {
    /// The key is `s[..len]`.
    Prefix(usize),
    /// The key is in `out`.
    Out,
}

/// Copy-on-change output: the key is `out` followed by `s[from..]`. While
/// `dirty` is false, `out` is not used at all and `from` is 0: the key so
/// far is a prefix of `s`, so a position in the key is the same position in
/// `s`. The first edit copies that prefix to `out`.
struct CopyOnWrite<'a> {
    s: &'a [u8],
    out: &'a mut Vec<u8>,
    from: usize,
    dirty: bool,
}

impl CopyOnWrite<'_> {
    /// Replaces `s[at..resume]` (with `from <= at <= resume`) by `with`.
    #[inline(always)]
    fn edit(&mut self, at: usize, resume: usize, with: &[u8]) {
        if !self.dirty {
            self.dirty = true;
            self.out.clear();
        }
        self.out.extend_from_slice(&self.s[self.from..at]);
        self.out.extend_from_slice(with);
        self.from = resume;
    }

    /// `out`, holding the key of `s[..to]` (written out if it was not).
    #[inline(always)]
    fn written_to(&mut self, to: usize) -> &mut Vec<u8> {
        self.edit(to, to, b"");
        self.out
    }

    /// The state to go back to with [`reset`](Self::reset).
    #[inline(always)]
    fn mark(&self) -> (bool, usize, usize) {
        (self.dirty, self.out.len(), self.from)
    }

    /// Forgets everything written since `mark`.
    #[inline(always)]
    fn reset(&mut self, (dirty, len, from): (bool, usize, usize)) {
        self.dirty = dirty;
        self.out.truncate(len);
        self.from = from;
    }

    /// The length of the key of `s[..at]`. Needs `from <= at`: no edit
    /// has consumed `s[at]` yet.
    #[inline(always)]
    fn key_len(&self, at: usize) -> usize {
        if self.dirty {
            self.out.len() + (at - self.from)
        } else {
            at
        }
    }

    /// Copies `s[from..to]` to `out` once the key is being written.
    #[inline(always)]
    fn flush(&mut self, to: usize) {
        if self.dirty {
            self.out.extend_from_slice(&self.s[self.from..to]);
            self.from = to;
        }
    }
}

/// Does a path segment end at `j` (end, `/`, `?` or `#`)?
#[inline(always)]
fn segment_ends(s: &[u8], j: usize) -> bool {
    !matches!(s.get(j), Some(b) if !matches!(b, b'/' | b'?' | b'#'))
}

/// The two hex digits at `s[i + 1]`, `s[i + 2]` (`s[i]` is `%`) and the
/// octet they encode.
#[inline(always)]
fn escape_at(s: &[u8], i: usize) -> Option<(u8, u8, u8)> {
    let (&h, &l) = (s.get(i + 1)?, s.get(i + 2)?);
    let (hv, lv) = (hex(h), hex(l));
    ((hv | lv) & 16 == 0).then_some((h, l, (hv & 15) << 4 | (lv & 15)))
}

#[cfg(test)]
mod tests {
    use super::scalar::class;
    use super::*;

    fn is(b: u8, c: u8) -> bool {
        class(b) & c != 0
    }

    #[test]
    fn word_schemes_follow_the_scheme_table() {
        for name in ["http", "https", "file", "ftp", "ws", "wss"] {
            let line = format!("{}://host/", name.to_ascii_uppercase());
            let head = u64::from_le_bytes(*line.as_bytes().first_chunk::<8>().unwrap());
            let (known, lower) = scheme_of(head).unwrap();
            assert_eq!(known.name, name.as_bytes());
            assert!(!lower);
            let info = scheme::lookup(name.as_bytes());
            assert_eq!(known.port, info.and_then(|i| i.default_port), "{name}");
            assert_eq!(
                known.empty_path_is_slash,
                info.is_some_and(|i| i.empty_path_is_slash)
            );
        }
        let head = |l: &[u8]| u64::from_le_bytes(*l.first_chunk::<8>().unwrap());
        assert!(scheme_of(head(b"files://x")).is_none());
        assert!(scheme_of(head(b"fil://xy")).is_none());
        assert!(scheme_of(head(b"file:/xy")).is_none());
    }

    #[test]
    fn hex_table_matches_hex_value() {
        for b in 0..=255u8 {
            let h = hex(b);
            match pct::hex_value(b) {
                Some(v) => {
                    assert_eq!(h & 15, v, "{b:#x}");
                    assert_eq!(h & 16, 0, "{b:#x}");
                    assert_eq!(h & LOWER_HEX != 0, b.is_ascii_lowercase(), "{b:#x}");
                }
                None => assert_ne!(h & 16, 0, "{b:#x}"),
            }
        }
    }

    #[test]
    fn classes_match_the_rfc_tables() {
        for b in 0..=255u8 {
            assert_eq!(is(b, F_HOST_ANY), table::is_unreserved(b), "{b:#x}");
            assert_eq!(
                is(b, F_HOST),
                table::is_unreserved(b) && !b.is_ascii_uppercase(),
                "{b:#x}"
            );
            assert_eq!(
                is(b, F_PATH_PLAIN),
                (table::is(b, table::PCHAR) || b == b'/') && b != b'.',
                "{b:#x}"
            );
            assert_eq!(is(b, F_QUERY_PLAIN), table::is(b, table::QUERY), "{b:#x}");
            assert_eq!(is(b, F_USERINFO), table::is(b, table::USERINFO), "{b:#x}");
        }
    }
}
