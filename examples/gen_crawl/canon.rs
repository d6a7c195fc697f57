//! Canonical URLs: the components of a URL that every profile (`none`,
//! `syntax`, `rfc`) leaves unchanged.
//!
//! Invariants of every generated [`Parts`] (so that it is its own key under
//! RFC 3986 §6.2.2 and §6.2.3): lower-case scheme and host, no
//! percent-encoded unreserved character, upper-case hex in every escape, no
//! `.` or `..` segment, no empty or default port, and a path that starts with
//! `/` (never empty after an authority).

use crate::rng::{mix, Rng};
use crate::vocab::*;

/// The kind of host, which decides which variants apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostKind {
    /// A registered name such as `www.example.com`.
    Name,
    /// A dotted-decimal IPv4 address.
    V4,
    /// A bracketed IPv6 literal.
    V6,
}

/// The components of one URL, reused from line to line without allocating.
#[derive(Clone, Debug)]
pub struct Parts {
    pub scheme: Vec<u8>,
    /// True when the URL has an authority (`//`); generated URLs always
    /// do, real ones (`mailto:a@b`, `urn:x`) may not, and then `userinfo`,
    /// `host` and `port` are empty.
    pub authority: bool,
    pub userinfo: Option<Vec<u8>>,
    pub host: Vec<u8>,
    pub host_kind: HostKind,
    /// `None`: no `:`; `Some(empty)`: a bare `host:`.
    pub port: Option<Vec<u8>>,
    pub path: Vec<u8>,
    pub query: Option<Vec<u8>>,
    pub fragment: Option<Vec<u8>>,
}

impl Default for Parts {
    fn default() -> Self {
        Parts {
            scheme: Vec::new(),
            authority: true,
            userinfo: None,
            host: Vec::new(),
            host_kind: HostKind::Name,
            port: None,
            path: Vec::new(),
            query: None,
            fragment: None,
        }
    }
}

impl Parts {
    /// Copies `other` into `self`, reusing buffers.
    pub fn copy_from(&mut self, other: &Parts) {
        copy_vec(&mut self.scheme, &other.scheme);
        self.authority = other.authority;
        copy_opt(&mut self.userinfo, &other.userinfo);
        copy_vec(&mut self.host, &other.host);
        self.host_kind = other.host_kind;
        copy_opt(&mut self.port, &other.port);
        copy_vec(&mut self.path, &other.path);
        copy_opt(&mut self.query, &other.query);
        copy_opt(&mut self.fragment, &other.fragment);
    }

    /// True for `http` and `https`, whose default ports and empty paths the
    /// `rfc` profile normalizes.
    pub fn is_http_like(&self) -> bool {
        self.scheme.eq_ignore_ascii_case(b"http") || self.scheme.eq_ignore_ascii_case(b"https")
    }

    /// The default port of the scheme, for `http`/`https`.
    pub fn default_port(&self) -> &'static [u8] {
        if self.scheme.eq_ignore_ascii_case(b"https") {
            b"443"
        } else {
            b"80"
        }
    }

    /// Appends the URL text to `out`.
    pub fn render(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.scheme);
        out.push(b':');
        if self.authority {
            out.extend_from_slice(b"//");
            if let Some(u) = &self.userinfo {
                out.extend_from_slice(u);
                out.push(b'@');
            }
            out.extend_from_slice(&self.host);
            if let Some(p) = &self.port {
                out.push(b':');
                out.extend_from_slice(p);
            }
        }
        out.extend_from_slice(&self.path);
        if let Some(q) = &self.query {
            out.push(b'?');
            out.extend_from_slice(q);
        }
        if let Some(f) = &self.fragment {
            out.push(b'#');
            out.extend_from_slice(f);
        }
    }
}

fn copy_vec(dst: &mut Vec<u8>, src: &[u8]) {
    dst.clear();
    dst.extend_from_slice(src);
}

fn copy_opt(dst: &mut Option<Vec<u8>>, src: &Option<Vec<u8>>) {
    match (dst.as_mut(), src) {
        (Some(d), Some(s)) => copy_vec(d, s),
        (None, Some(s)) => *dst = Some(s.clone()),
        (_, None) => *dst = None,
    }
}

/// Number of distinct sites; site popularity is skewed towards low ids.
const SITES: u64 = 60_000;

/// Fills `p` with the canonical URL derived from `seed` (same seed, same URL).
pub fn generate(seed: u64, global_seed: u64, p: &mut Parts) {
    let mut r = Rng::new(seed);
    let scheme: &[u8] = match r.below(1000) {
        0..=689 => b"https",
        690..=994 => b"http",
        _ => b"ftp",
    };
    copy_vec(&mut p.scheme, scheme);
    p.authority = true;

    p.userinfo = None;
    if r.chance(0.004) {
        let mut u = Vec::with_capacity(16);
        u.extend_from_slice(r.pick(WORDS).as_bytes());
        if r.chance(0.5) {
            u.push(b':');
            u.extend_from_slice(r.pick(WORDS).as_bytes());
        }
        p.userinfo = Some(u);
    }

    p.host.clear();
    match r.below(1000) {
        0..=17 => {
            p.host_kind = HostKind::V4;
            let a = [r.range(1, 223), r.below(256), r.below(256), r.range(1, 254)];
            let s = format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3]);
            p.host.extend_from_slice(s.as_bytes());
        }
        18..=22 => {
            p.host_kind = HostKind::V6;
            p.host.extend_from_slice(r.pick(IPV6_HOSTS).as_bytes());
        }
        _ => {
            p.host_kind = HostKind::Name;
            p.host
                .extend_from_slice(SUBDOMAINS[r.weighted(&SUBDOMAIN_WEIGHTS)].0.as_bytes());
            // Skewed site choice: a few sites get most URLs, as in crawls.
            let u = r.unit();
            let site = (u * u * u * SITES as f64) as u64;
            site_name(mix(site ^ global_seed), &mut p.host);
        }
    }

    p.port = None;
    if scheme != b"ftp" && r.chance(0.03) {
        p.port = Some(r.pick(PORTS).as_bytes().to_vec());
    }

    p.path.clear();
    path(&mut r, scheme == b"ftp", &mut p.path);

    p.query = None;
    if scheme != b"ftp" && r.chance(0.65) {
        let mut q = Vec::with_capacity(48);
        query(&mut r, &mut q);
        p.query = Some(q);
    }

    p.fragment = None;
    if r.chance(0.04) {
        p.fragment = Some(r.pick(FRAGMENTS).as_bytes().to_vec());
    }
}

const SUBDOMAIN_WEIGHTS: [u32; SUBDOMAINS.len()] = weights(SUBDOMAINS);
const TLD_WEIGHTS: [u32; TLDS.len()] = weights(TLDS);

const fn weights<const N: usize>(items: &[(&str, u32)]) -> [u32; N] {
    let mut w = [0; N];
    let mut i = 0;
    while i < N {
        w[i] = items[i].1;
        i += 1;
    }
    w
}

/// Appends a registrable name such as `bluecedar-shop.co.uk`.
fn site_name(seed: u64, out: &mut Vec<u8>) {
    let mut r = Rng::new(seed);
    out.extend_from_slice(r.pick(WORDS).as_bytes());
    match r.below(10) {
        0..=4 => out.extend_from_slice(r.pick(WORDS).as_bytes()),
        5 => {
            out.push(b'-');
            out.extend_from_slice(r.pick(WORDS).as_bytes());
        }
        6 => push_num(out, r.range(1, 999)),
        _ => {}
    }
    out.push(b'.');
    out.extend_from_slice(TLDS[r.weighted(&TLD_WEIGHTS)].0.as_bytes());
}

fn push_num(out: &mut Vec<u8>, n: usize) {
    let mut buf = itoa_buf(n);
    out.append(&mut buf);
}

fn itoa_buf(mut n: usize) -> Vec<u8> {
    let mut digits = Vec::with_capacity(20);
    loop {
        digits.push(b'0' + (n % 10) as u8);
        n /= 10;
        if n == 0 {
            break;
        }
    }
    digits.reverse();
    digits
}

/// Appends a word, sometimes capitalised or with a required escape.
fn word(r: &mut Rng, out: &mut Vec<u8>) {
    let w = r.pick(WORDS).as_bytes();
    if r.chance(0.06) {
        out.push(w[0].to_ascii_uppercase());
        out.extend_from_slice(&w[1..]);
    } else {
        out.extend_from_slice(w);
    }
}

/// A slug such as `amber-river-7` with an occasional required escape.
fn slug(r: &mut Rng, out: &mut Vec<u8>) {
    let n = r.range(3, 6);
    for i in 0..n {
        if i > 0 {
            if r.chance(0.08) {
                out.extend_from_slice(r.pick(NEEDED_ESCAPES).as_bytes());
            } else {
                out.push(b'-');
            }
        }
        word(r, out);
    }
    if r.chance(0.3) {
        out.push(b'-');
        push_num(out, r.range(1, 99_999));
    }
}

/// Appends a path that starts with `/`.
fn path(r: &mut Rng, non_empty: bool, out: &mut Vec<u8>) {
    // Shapes: root, article, product, wiki, script, user, static, generic.
    let weights = [if non_empty { 0 } else { 9 }, 24, 14, 8, 10, 7, 10, 18];
    let shape = r.weighted(&weights);
    if shape != 0 && r.chance(0.2) {
        out.push(b'/');
        out.extend_from_slice(r.pick(LOCALES).as_bytes());
    }
    match shape {
        0 => out.push(b'/'),
        1 => {
            // /news/2023/05/amber-river.html
            out.push(b'/');
            out.extend_from_slice(r.pick(SECTIONS).as_bytes());
            if r.chance(0.5) {
                out.push(b'/');
                out.extend_from_slice(r.pick(WORDS).as_bytes());
            }
            out.push(b'/');
            push_num(out, r.range(2005, 2024));
            out.push(b'/');
            push_two(out, r.range(1, 12));
            out.push(b'/');
            slug(r, out);
            if r.chance(0.65) {
                out.extend_from_slice(r.pick(EXTENSIONS).as_bytes());
            } else {
                out.push(b'/');
            }
        }
        2 => {
            // /product/amber-river-123 or /p/123456
            out.push(b'/');
            out.extend_from_slice(r.pick(SECTIONS).as_bytes());
            out.push(b'/');
            if r.chance(0.5) {
                push_num(out, r.range(1, 9_999_999));
            } else {
                slug(r, out);
            }
        }
        3 => {
            // /wiki/Amber_River
            out.extend_from_slice(b"/wiki/");
            let w = r.pick(WORDS).as_bytes();
            out.push(w[0].to_ascii_uppercase());
            out.extend_from_slice(&w[1..]);
            for _ in 0..r.below(3) {
                if r.chance(0.1) {
                    out.extend_from_slice(r.pick(NEEDED_ESCAPES).as_bytes());
                } else {
                    out.push(b'_');
                }
                word(r, out);
            }
        }
        4 => {
            // /index.php or /forum/viewtopic.php
            if r.chance(0.5) {
                out.push(b'/');
                out.extend_from_slice(r.pick(SECTIONS).as_bytes());
            }
            out.push(b'/');
            out.extend_from_slice(r.pick(WORDS).as_bytes());
            out.extend_from_slice(if r.chance(0.7) { b".php" } else { b".aspx" });
        }
        5 => {
            // /~user/ or /users/name
            if r.chance(0.3) {
                out.extend_from_slice(b"/~");
                out.extend_from_slice(r.pick(WORDS).as_bytes());
                out.push(b'/');
            } else {
                out.extend_from_slice(b"/users/");
                out.extend_from_slice(r.pick(WORDS).as_bytes());
                push_num(out, r.below(1000));
                if r.chance(0.5) {
                    out.push(b'/');
                    out.extend_from_slice(r.pick(SECTIONS).as_bytes());
                }
            }
        }
        6 => {
            // /static/img/amber12.jpg
            out.push(b'/');
            out.extend_from_slice(r.pick(SECTIONS).as_bytes());
            out.push(b'/');
            out.extend_from_slice(r.pick(WORDS).as_bytes());
            out.push(b'/');
            out.extend_from_slice(r.pick(WORDS).as_bytes());
            push_num(out, r.below(100));
            out.extend_from_slice(r.pick(EXTENSIONS).as_bytes());
        }
        _ => {
            // Generic word segments, sometimes with a trailing slash.
            for _ in 0..r.range(2, 6) {
                out.push(b'/');
                word(r, out);
            }
            if r.chance(0.3) {
                out.push(b'/');
            }
        }
    }
}

fn push_two(out: &mut Vec<u8>, n: usize) {
    out.push(b'0' + (n / 10) as u8);
    out.push(b'0' + (n % 10) as u8);
}

/// Appends `key=value&...` (without the `?`).
fn query(r: &mut Rng, out: &mut Vec<u8>) {
    let n = r.weighted(&[0, 40, 30, 18, 12]);
    for i in 0..n {
        if i > 0 {
            out.push(b'&');
        }
        out.extend_from_slice(r.pick(QUERY_KEYS).as_bytes());
        out.push(b'=');
        match r.below(12) {
            0..=3 => push_num(out, r.range(1, 999_999)),
            9 | 10 => {
                // Session ids and tokens: lower-case hex.
                for _ in 0..r.range(16, 32) {
                    out.push(b"0123456789abcdef"[r.below(16)]);
                }
            }
            4..=6 => out.extend_from_slice(r.pick(WORDS).as_bytes()),
            7 => {
                word(r, out);
                out.push(b'+');
                word(r, out);
            }
            8 => {
                out.extend_from_slice(r.pick(WORDS).as_bytes());
                out.extend_from_slice(r.pick(NEEDED_ESCAPES).as_bytes());
                out.extend_from_slice(r.pick(WORDS).as_bytes());
            }
            _ => {}
        }
    }
    if r.chance(0.2) {
        for key in UTM_KEYS.iter().take(r.range(1, 3)) {
            if !out.is_empty() {
                out.push(b'&');
            }
            out.extend_from_slice(key.as_bytes());
            out.push(b'=');
            out.extend_from_slice(r.pick(UTM_VALUES).as_bytes());
        }
    }
}
