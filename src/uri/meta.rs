//! Component offsets of a parsed URI-reference.
//!
//! ```text
//!   foo://user@example.com:8042/over/there?name=ferret#nose
//!   |  |  |   | |          | |  |          |           |   |
//!   0  |  |   | host_start | |  path_start  path_end   |   len
//!      |  |   userinfo_end | port_start     query_end--+
//!      |  authority_start  authority_end == path_start  fragment_start
//!      scheme_end (':')
//! ```
//!
//! Absent components use the sentinel [`NONE`]; an empty component is a
//! real, empty range. `authority_start` is `scheme_end + 3` (or 2 with no
//! scheme) and so is not stored.

/// Marks an absent component.
use core::ops::Range;

pub(crate) const NONE: u32 = u32::MAX;

/// What kind of host an authority holds (§3.2.2, first match wins).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HostKind {
    /// `reg-name`, possibly empty.
    RegName,
    /// `IPv4address` in dotted-decimal.
    Ipv4,
    /// `"[" IPv6address "]"`.
    Ipv6,
    /// `"[" IPvFuture "]"`.
    IpvFuture,
}

impl HostKind {
    /// The name used in JSON output: `reg-name`, `ipv4`, `ipv6`, `ipvfuture`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::RegName => "reg-name",
            Self::Ipv4 => "ipv4",
            Self::Ipv6 => "ipv6",
            Self::IpvFuture => "ipvfuture",
        }
    }
}

/// Offsets into the input; see the module diagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Meta {
    /// Index of the `:` after the scheme, or `NONE`.
    pub scheme_end: u32,
    /// Index of the `@` after the userinfo, or `NONE`.
    pub userinfo_end: u32,
    /// Start of the host, or `NONE` when there is no authority.
    pub host_start: u32,
    /// End of the host (exclusive).
    pub host_end: u32,
    /// Start of the port digits (after `:`), or `NONE`.
    pub port_start: u32,
    /// End of the authority (exclusive), or `NONE`.
    pub authority_end: u32,
    /// Start of the path.
    pub path_start: u32,
    /// End of the path (exclusive).
    pub path_end: u32,
    /// End of the query (exclusive), or `NONE` when there is no `?`.
    pub query_end: u32,
    /// Start of the fragment (after `#`), or `NONE`.
    pub fragment_start: u32,
    /// Length of the input.
    pub len: u32,
    /// Kind of the host, meaningful only when there is an authority.
    pub host_kind: HostKind,
}

impl Meta {
    pub(crate) const fn empty(len: u32) -> Self {
        Self {
            scheme_end: NONE,
            userinfo_end: NONE,
            host_start: NONE,
            host_end: NONE,
            port_start: NONE,
            authority_end: NONE,
            path_start: 0,
            path_end: 0,
            query_end: NONE,
            fragment_start: NONE,
            len,
            host_kind: HostKind::RegName,
        }
    }

    /// Checks the ordering invariants in debug builds.
    /// The scheme's range, if any.
    #[inline]
    pub(crate) fn scheme(&self) -> Option<Range<usize>> {
        (self.scheme_end != NONE).then_some(0..self.scheme_end as usize)
    }

    /// Where the authority starts (after `//`), when there is one.
    #[inline]
    fn authority_start(&self) -> u32 {
        if self.scheme_end == NONE {
            2
        } else {
            self.scheme_end + 3
        }
    }

    /// The authority's range (without `//`), if any.
    #[inline]
    pub(crate) fn authority(&self) -> Option<Range<usize>> {
        (self.host_start != NONE)
            .then(|| self.authority_start() as usize..self.authority_end as usize)
    }

    /// The userinfo's range (without `@`), if any.
    #[inline]
    pub(crate) fn userinfo(&self) -> Option<Range<usize>> {
        (self.userinfo_end != NONE)
            .then(|| self.authority_start() as usize..self.userinfo_end as usize)
    }

    /// The host's range, when there is an authority.
    #[inline]
    pub(crate) fn host(&self) -> Option<Range<usize>> {
        (self.host_start != NONE).then_some(self.host_start as usize..self.host_end as usize)
    }

    /// The port's range (without `:`), if any.
    #[inline]
    pub(crate) fn port(&self) -> Option<Range<usize>> {
        (self.port_start != NONE).then_some(self.port_start as usize..self.authority_end as usize)
    }

    /// The path's range (possibly empty).
    #[inline]
    pub(crate) fn path(&self) -> Range<usize> {
        self.path_start as usize..self.path_end as usize
    }

    /// The query's range (without `?`), if any.
    #[inline]
    pub(crate) fn query(&self) -> Option<Range<usize>> {
        (self.query_end != NONE).then(|| self.path_end as usize + 1..self.query_end as usize)
    }

    /// The fragment's range (without `#`), if any.
    #[inline]
    pub(crate) fn fragment(&self) -> Option<Range<usize>> {
        (self.fragment_start != NONE).then_some(self.fragment_start as usize..self.len as usize)
    }

    pub(crate) fn debug_check(&self) {
        if cfg!(debug_assertions) {
            let opt = |v: u32, d: u32| if v == NONE { d } else { v };
            assert!(opt(self.scheme_end, 0) <= self.path_start);
            if self.host_start != NONE {
                assert!(self.host_start <= self.host_end);
                assert!(self.host_end <= self.authority_end);
                assert_eq!(self.authority_end, self.path_start);
            }
            assert!(self.path_start <= self.path_end);
            assert!(opt(self.query_end, self.path_end) >= self.path_end);
            assert!(opt(self.fragment_start, self.len) <= self.len);
        }
    }
}
