//! Normalization of parsed URI-references into canonical form
//! ([RFC 3986 §6](https://www.rfc-editor.org/rfc/rfc3986#section-6)).
//!
//! Every step is a named [`Flag`]; a [`Profile`] is a named set of flags and
//! a [`Normalizer`] is a flag set plus the list of query parameters to drop.
//!
//! | profile  | flags |
//! | -------- | ----- |
//! | `none`   | nothing: the key is the input |
//! | `syntax` | §6.2.2: `lowercase-scheme`, `lowercase-host`, `uppercase-escapes`, `decode-unreserved`, `remove-dot-segments`, `remove-empty-port` |
//! | `rfc`    | `syntax` + §6.2.3: `remove-default-port`, `remove-port-leading-zeros`, `empty-path-slash` (the default) |
//! | `crawl`  | `rfc` + `remove-fragment`, `ipv6-canonical`, `ipv4-canonical`, `idna`, `remove-trailing-host-dot`, `remove-empty-query` |
//!
//! The opt-in flags (`sort-query`, `remove-query-params`,
//! `strip-session-ids`, `remove-www`, `remove-trailing-slash`,
//! `add-trailing-slash`, `remove-duplicate-slashes`,
//! `remove-directory-index`) can merge URLs that a server treats as
//! different, so no profile turns them on.
//!
//! Whatever the flags, normalization never decodes a reserved character
//! (`%2F`, `%3F`, `%23`, `%26`, `%3D`, `%25`, ...), a control octet or a
//! non-ASCII octet; never changes the case of the path, query or userinfo;
//! and never turns `+` into a space. Relative references get only the case
//! and percent-encoding rules (`lowercase-host`, `uppercase-escapes`,
//! `decode-unreserved`): the other rules need a scheme to be meaningful.
//!
//! Every flag set is idempotent: normalizing a normalized URI changes
//! nothing (the property tests check this for random flag sets).
//!
//! ```
//! use urikey::uri::key::{KeyScratch, Keyer};
//! use urikey::uri::normalize::{Flag, Normalizer, Profile};
//! let mut scratch = KeyScratch::default();
//! let rfc = Keyer::new(Normalizer::default()); // profile `rfc`
//! let key = rfc.key(b"HTTP://Example.COM:80/a/./b/%7e", &mut scratch)?;
//! assert_eq!(key.as_str(), "http://example.com/a/b/~");
//! let crawl = Keyer::new(Normalizer::profile(Profile::Crawl).with(Flag::SortQuery));
//! let key = crawl.key(b"http://0x7f.1/?b=2&a=1#top", &mut scratch)?;
//! assert_eq!(key.as_str(), "http://127.0.0.1/?a=1&b=2");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::host::{parse_ipv4_number_form, write_ipv4, write_ipv6};
use super::meta::HostKind;
use super::path::{has_dot_segment, remove_dot_segments};
use super::scheme::{self, SchemeInfo};
use super::RawRef;
use super::{pct, table};

mod flags;

pub use flags::{Flag, Flags, Profile};

/// A query parameter name to drop: exact, or a prefix (`utm_*`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct ParamPattern {
    name: Box<[u8]>,
    prefix: bool,
}

impl ParamPattern {
    fn parse(s: &str) -> Option<ParamPattern> {
        let (name, prefix) = match s.strip_suffix('*') {
            Some(p) => (p, true),
            None => (s, false),
        };
        (!name.is_empty() || prefix).then(|| ParamPattern {
            name: name.as_bytes().into(),
            prefix,
        })
    }

    fn matches(&self, name: &[u8]) -> bool {
        if self.prefix {
            name.starts_with(&self.name)
        } else {
            *name == *self.name
        }
    }
}

/// Normalization settings: a flag set plus the parameters that
/// [`Flag::RemoveQueryParams`] drops. `Default` is profile `rfc`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Normalizer {
    flags: Flags,
    params: Vec<ParamPattern>,
}

impl Default for Normalizer {
    fn default() -> Self {
        Self::profile(Profile::Rfc)
    }
}

/// Reusable buffers for the normalizer's writer; keeping one per
/// thread avoids any allocation once the buffers have grown.
#[derive(Default, Debug, Clone)]
pub struct NormalizeScratch {
    tmp: Vec<u8>,
    params: Vec<(u32, u32)>,
}

impl Normalizer {
    /// The normalizer of `profile`.
    pub const fn profile(profile: Profile) -> Self {
        Self {
            flags: profile.flags(),
            params: Vec::new(),
        }
    }

    /// A normalizer with exactly `flags`.
    pub const fn from_flags(flags: Flags) -> Self {
        Self {
            flags,
            params: Vec::new(),
        }
    }

    /// Adds `flag`.
    pub fn with(mut self, flag: Flag) -> Self {
        self.flags = self.flags.with(flag);
        self
    }

    /// Removes `flag`.
    pub fn without(mut self, flag: Flag) -> Self {
        self.flags = self.flags.without(flag);
        self
    }

    /// Adds query parameter names for [`Flag::RemoveQueryParams`] (and turns
    /// that flag on). A name ending in `*` is a prefix: `utm_*`. Names are
    /// compared byte for byte with the normalized parameter name.
    pub fn remove_query_params<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.params.extend(
            names
                .into_iter()
                .filter_map(|n| ParamPattern::parse(n.as_ref())),
        );
        self.flags = self.flags.with(Flag::RemoveQueryParams);
        self
    }

    /// The flag set.
    pub const fn flags(&self) -> Flags {
        self.flags
    }

    /// Is `flag` on?
    #[inline(always)]
    pub const fn has(&self, flag: Flag) -> bool {
        self.flags.has(flag)
    }

    /// Appends the normalized form of `u` to `out`, using `scratch` for the
    /// temporary buffers (no allocation once they have grown). The public
    /// way in is [`Keyer`](crate::uri::key::Keyer), whose fast tier
    /// skips this for most lines.
    pub(crate) fn normalize_raw(
        &self,
        u: &RawRef<'_>,
        out: &mut Vec<u8>,
        scratch: &mut NormalizeScratch,
    ) {
        let f = self.flags;
        if u.is_relative() {
            // Only the case and percent-encoding rules apply (§6.1 compares
            // references after resolving them; we do not resolve).
            let only = Flags::of(&[
                Flag::LowercaseHost,
                Flag::UppercaseEscapes,
                Flag::DecodeUnreserved,
            ]);
            let f = f.intersection(only);
            Writer {
                f,
                n: self,
                info: None,
                out,
                scratch,
            }
            .write(u);
            return;
        }
        let info = scheme::lookup(u.scheme().unwrap_or(b""));
        Writer {
            f,
            n: self,
            info,
            out,
            scratch,
        }
        .write(u);
    }
}

/// One normalization run.
struct Writer<'s> {
    f: Flags,
    n: &'s Normalizer,
    info: Option<&'static SchemeInfo>,
    out: &'s mut Vec<u8>,
    scratch: &'s mut NormalizeScratch,
}

impl Writer<'_> {
    fn write(&mut self, u: &RawRef<'_>) {
        let f = self.f;
        if let Some(s) = u.scheme() {
            let start = self.out.len();
            self.out.extend_from_slice(s);
            if f.has(Flag::LowercaseScheme) {
                self.out[start..].make_ascii_lowercase();
            }
            self.out.push(b':');
        }
        if u.has_authority() {
            self.out.extend_from_slice(b"//");
            if let Some(ui) = u.userinfo() {
                self.pct(ui);
                self.out.push(b'@');
            }
            self.host(u);
            self.port(u);
        }
        self.path(u);
        if let Some(q) = u.query() {
            self.query(q);
        }
        if let Some(frag) = u.fragment() {
            if !f.has(Flag::RemoveFragment) {
                self.out.push(b'#');
                self.pct(frag);
            }
        }
    }

    /// Copies `src` with the percent-encoding rules applied.
    #[inline]
    fn pct(&mut self, src: &[u8]) {
        pct_normalize(
            src,
            self.out,
            self.f.has(Flag::DecodeUnreserved),
            self.f.has(Flag::UppercaseEscapes),
        );
    }

    fn host(&mut self, u: &RawRef<'_>) {
        let host = u.host().unwrap_or(b"");
        let start = self.out.len();
        let f = self.f;
        match u.host_kind() {
            Some(HostKind::Ipv6) if f.has(Flag::Ipv6Canonical) => match u.ipv6() {
                Some(pieces) => {
                    self.out.push(b'[');
                    write_ipv6(&pieces, self.out);
                    self.out.push(b']');
                }
                None => self.out.extend_from_slice(host),
            },
            Some(HostKind::Ipv6 | HostKind::IpvFuture) => {
                self.out.extend_from_slice(host);
                if f.has(Flag::LowercaseHost) {
                    self.out[start..].make_ascii_lowercase();
                }
            }
            Some(HostKind::Ipv4) => self.out.extend_from_slice(host),
            Some(HostKind::RegName) | None => {
                self.pct(host);
                if f.has(Flag::LowercaseHost) {
                    lowercase_outside_escapes(&mut self.out[start..]);
                }
                self.reg_name_rules(start);
            }
        }
    }

    /// The crawl rules for a reg-name host written at `out[start..]`.
    fn reg_name_rules(&mut self, start: usize) {
        let f = self.f;
        // IDNA is for DNS names: only for the schemes of our table, whose
        // hosts are DNS names. An unknown scheme's reg-name may be anything.
        if f.has(Flag::Idna) && self.info.is_some() {
            idna_host(self.out, start, &mut self.scratch.tmp);
        }
        if f.has(Flag::RemoveWww) {
            let mut cut = start;
            while self.out.len() > cut + 4 && self.out[cut..].starts_with(b"www.") {
                cut += 4;
            }
            self.out.drain(start..cut);
        }
        // Before the trailing dot goes: the IPv4 reader allows one
        // trailing dot itself, and `127.1..` is no address.
        if f.has(Flag::Ipv4Canonical) && self.info.is_some_and(|i| i.http_like) {
            if let Some(addr) = parse_ipv4_number_form(&self.out[start..]) {
                self.out.truncate(start);
                write_ipv4(addr, self.out);
            }
        }
        if f.has(Flag::RemoveTrailingHostDot) && self.info.is_some() {
            let host = &self.out[start..];
            if host.len() >= 2 && host.ends_with(b".") && !host.ends_with(b"..") {
                self.out.pop();
            }
        }
    }

    fn port(&mut self, u: &RawRef<'_>) {
        let Some(port) = u.port() else { return };
        if port.is_empty() && self.f.has(Flag::RemoveEmptyPort) {
            return;
        }
        if self.f.has(Flag::RemoveDefaultPort) {
            if let Some(default) = self.info.and_then(|i| i.default_port) {
                if scheme::is_port(port, default) {
                    return;
                }
            }
        }
        self.out.push(b':');
        if self.f.has(Flag::PortLeadingZeros) {
            self.out.extend_from_slice(strip_port_zeros(port));
        } else {
            self.out.extend_from_slice(port);
        }
    }

    fn path(&mut self, u: &RawRef<'_>) {
        let f = self.f;
        let start = self.out.len();
        self.pct(u.path());
        let authority = u.has_authority();
        let crawl_path = authority && !u.is_relative();
        if crawl_path && f.has(Flag::StripSessionIds) {
            strip_session_path_params(self.out, start);
        }
        // Only a hierarchical path: a rootless one is opaque (see the flag).
        let hierarchical = authority || self.out[start..].starts_with(b"/");
        if f.has(Flag::RemoveDotSegments) && hierarchical && has_dot_segment(&self.out[start..]) {
            let tmp = &mut self.scratch.tmp;
            tmp.clear();
            tmp.extend_from_slice(&self.out[start..]);
            self.out.truncate(start);
            remove_dot_segments(tmp, self.out);
            if !authority && self.out[start..].starts_with(b"//") {
                // Without an authority a path may not start with "//"
                // (§3.3); keep a "/." prefix as WHATWG URL and fluent-uri do.
                self.out.splice(start..start, *b"/.");
            }
        }
        if authority
            && self.out.len() == start
            && f.has(Flag::EmptyPathSlash)
            && self.info.is_some_and(|i| i.empty_path_is_slash)
        {
            self.out.push(b'/');
        }
        if crawl_path {
            self.crawl_path_rules(start);
        }
    }

    fn crawl_path_rules(&mut self, start: usize) {
        let f = self.f;
        if f.has(Flag::RemoveDuplicateSlashes) {
            let mut w = start;
            for r in start..self.out.len() {
                let b = self.out[r];
                if b == b'/' && w > start && self.out[w - 1] == b'/' {
                    continue;
                }
                self.out[w] = b;
                w += 1;
            }
            self.out.truncate(w);
        }
        // Removing an index page can expose a trailing slash and removing a
        // trailing slash can expose an index page: repeat to a fixed point,
        // so that the result is idempotent. Each round shortens the path.
        loop {
            let len = self.out.len();
            if f.has(Flag::RemoveDirectoryIndex) {
                let last = last_segment_start(self.out, start);
                if is_directory_index(&self.out[last..]) {
                    self.out.truncate(last);
                }
            }
            if f.has(Flag::RemoveTrailingSlash) {
                while self.out.len() > start + 1 && self.out.last() == Some(&b'/') {
                    self.out.pop();
                }
            }
            if self.out.len() == len {
                break;
            }
        }
        if !f.has(Flag::RemoveTrailingSlash) && f.has(Flag::AddTrailingSlash) {
            let last = last_segment_start(self.out, start);
            let seg = &self.out[last..];
            if !seg.is_empty() && !seg.contains(&b'.') {
                self.out.push(b'/');
            }
        }
    }

    fn query(&mut self, q: &[u8]) {
        let f = self.f;
        self.out.push(b'?');
        let start = self.out.len();
        self.pct(q);
        let filter = f.has(Flag::StripSessionIds) || f.has(Flag::RemoveQueryParams);
        let mut removed = false;
        if filter || f.has(Flag::SortQuery) {
            removed = self.rewrite_params(start, filter);
        }
        if self.out.len() == start && (removed || f.has(Flag::RemoveEmptyQuery)) {
            self.out.pop();
        }
    }

    /// Drops and sorts the `&`-separated parameters of `out[start..]`.
    /// Returns true when a parameter was dropped.
    fn rewrite_params(&mut self, start: usize, filter: bool) -> bool {
        let f = self.f;
        let ranges = &mut self.scratch.params;
        ranges.clear();
        let q = &self.out[start..];
        let mut from = 0;
        let mut removed = false;
        let sort = f.has(Flag::SortQuery);
        for piece in q.split(|&b| b == b'&') {
            let to = from + piece.len();
            let name = piece.split(|&b| b == b'=').next().unwrap_or(piece);
            let drop = (sort && piece.is_empty() && !q.is_empty())
                || filter
                    && ((f.has(Flag::StripSessionIds) && is_session_id(name))
                        || (f.has(Flag::RemoveQueryParams)
                            && self.n.params.iter().any(|p| p.matches(name))));
            if drop {
                removed = true;
            } else {
                ranges.push((from as u32, to as u32));
            }
            from = to + 1;
        }
        if f.has(Flag::SortQuery) {
            ranges
                .sort_by(|a, b| q[a.0 as usize..a.1 as usize].cmp(&q[b.0 as usize..b.1 as usize]));
        }
        let tmp = &mut self.scratch.tmp;
        tmp.clear();
        for (i, &(a, b)) in ranges.iter().enumerate() {
            if i > 0 {
                tmp.push(b'&');
            }
            tmp.extend_from_slice(&q[a as usize..b as usize]);
        }
        self.out.truncate(start);
        self.out.extend_from_slice(tmp);
        removed
    }
}

/// Copies `src` to `out`, decoding percent-encoded unreserved characters
/// when `decode` is set and upper-casing the remaining escapes when `upper`
/// is. `src` must hold only valid `pct-encoded` triplets (it was parsed).
#[inline]
pub(crate) fn pct_normalize(src: &[u8], out: &mut Vec<u8>, decode: bool, upper: bool) {
    if !decode && !upper {
        out.extend_from_slice(src);
        return;
    }
    let mut rest = src;
    while let Some(p) = memchr::memchr(b'%', rest) {
        out.extend_from_slice(&rest[..p]);
        let (Some(&h), Some(&l)) = (rest.get(p + 1), rest.get(p + 2)) else {
            // Not reachable for parsed input; copy the tail unchanged.
            out.extend_from_slice(&rest[p..]);
            return;
        };
        match (pct::hex_value(h), pct::hex_value(l)) {
            (Some(hv), Some(lv)) => {
                let byte = hv << 4 | lv;
                if decode && table::is_unreserved(byte) {
                    out.push(byte);
                } else if upper {
                    out.extend_from_slice(&[b'%', h.to_ascii_uppercase(), l.to_ascii_uppercase()]);
                } else {
                    out.extend_from_slice(&[b'%', h, l]);
                }
            }
            _ => out.extend_from_slice(&[b'%', h, l]),
        }
        rest = &rest[p + 3..];
    }
    out.extend_from_slice(rest);
}

/// A port (`*DIGIT`, not empty) without its leading zeros, keeping one
/// digit: `0081` is `81`, `000` is `0`.
pub(crate) fn strip_port_zeros(port: &[u8]) -> &[u8] {
    let zeros = port.iter().take_while(|&&b| b == b'0').count();
    &port[zeros.min(port.len().saturating_sub(1))..]
}

/// Lower-cases ASCII letters that are not the hex digits of an escape.
fn lowercase_outside_escapes(s: &mut [u8]) {
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' {
            i += 3;
        } else {
            s[i] = s[i].to_ascii_lowercase();
            i += 1;
        }
    }
}

/// Index where the last segment of the path at `out[start..]` begins.
fn last_segment_start(out: &[u8], start: usize) -> usize {
    out[start..]
        .iter()
        .rposition(|&b| b == b'/')
        .map_or(start, |p| start + p + 1)
}

/// Last segments that name a directory's index page.
const DIRECTORY_INDEXES: &[&[u8]] = &[
    b"index.html",
    b"index.htm",
    b"index.php",
    b"index.asp",
    b"index.aspx",
    b"index.jsp",
    b"index.shtml",
    b"index.cgi",
    b"default.asp",
    b"default.aspx",
    b"default.htm",
    b"default.html",
];

fn is_directory_index(seg: &[u8]) -> bool {
    DIRECTORY_INDEXES
        .iter()
        .any(|d| d.eq_ignore_ascii_case(seg))
}

/// Session-id parameter names (compared ignoring ASCII case); the last one
/// is a prefix (`ASPSESSIONIDQQGGQGPG`).
const SESSION_IDS: &[&[u8]] = &[
    b"jsessionid",
    b"phpsessid",
    b"sid",
    b"sessionid",
    b"session_id",
    b"cfid",
    b"cftoken",
];

fn is_session_id(name: &[u8]) -> bool {
    SESSION_IDS.iter().any(|s| s.eq_ignore_ascii_case(name))
        || name.len() >= 12 && name[..12].eq_ignore_ascii_case(b"aspsessionid")
}

/// Removes `;name=value` path parameters whose name is a session id from
/// the path at `out[start..]`. A parameter runs up to the next `;` or `/`.
fn strip_session_path_params(out: &mut Vec<u8>, start: usize) {
    let mut r = start;
    let mut w = start;
    let len = out.len();
    while r < len {
        if out[r] == b';' {
            let end = out[r + 1..len]
                .iter()
                .position(|&b| b == b';' || b == b'/')
                .map_or(len, |p| r + 1 + p);
            let param = &out[r + 1..end];
            let name = param.split(|&b| b == b'=').next().unwrap_or(param);
            if param.contains(&b'=') && is_session_id(name) {
                r = end;
                continue;
            }
        }
        out[w] = out[r];
        w += 1;
        r += 1;
    }
    out.truncate(w);
}

/// Decodes a host that is percent-encoded UTF-8 with some non-ASCII
/// character and replaces it with its UTS #46 ToASCII form, when that
/// succeeds and yields a valid reg-name.
fn idna_host(out: &mut Vec<u8>, start: usize, tmp: &mut Vec<u8>) {
    let host = &out[start..];
    if !host
        .windows(2)
        .any(|w| w[0] == b'%' && matches!(w[1], b'8'..=b'9' | b'A'..=b'F' | b'a'..=b'f'))
    {
        return; // no escape of a non-ASCII octet
    }
    tmp.clear();
    let mut i = 0;
    while i < host.len() {
        if host[i] == b'%' && i + 2 < host.len() {
            match (pct::hex_value(host[i + 1]), pct::hex_value(host[i + 2])) {
                (Some(h), Some(l)) => {
                    let byte = h << 4 | l;
                    if byte < 0x80 {
                        // A reserved (or control) character stays encoded:
                        // decoding it would change the host's meaning.
                        return;
                    }
                    tmp.push(byte);
                    i += 3;
                    continue;
                }
                _ => return,
            }
        }
        tmp.push(host[i]);
        i += 1;
    }
    let Ok(text) = core::str::from_utf8(tmp) else {
        return;
    };
    let Ok(ascii) = idna::domain_to_ascii(text) else {
        return;
    };
    if ascii.is_empty()
        || !ascii
            .bytes()
            .all(|b| table::is(b, table::REG_NAME) && !b.is_ascii_uppercase())
    {
        return;
    }
    out.truncate(start);
    out.extend_from_slice(ascii.as_bytes());
}
