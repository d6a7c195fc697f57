//! The normalization vocabulary: every step as a named [`Flag`], flag sets
//! ([`Flags`]) and the named sets ([`Profile`]). The writer that applies
//! them is the parent module.

use core::fmt;

macro_rules! flags {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, )*) => {
        /// One normalization step. See the [module docs](crate::uri::normalize) for profiles.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum Flag {
            $( $(#[$doc])* $variant, )*
        }

        impl Flag {
            /// Every flag, in the order they are documented.
            pub const ALL: &'static [Flag] = &[$(Flag::$variant),*];

            /// The flag's name on the command line (`lowercase-scheme`, ...).
            pub const fn name(self) -> &'static str {
                match self {
                    $( Flag::$variant => $name, )*
                }
            }
        }
    };
}

flags! {
    /// Lower-case the scheme (§6.2.2.1, the scheme is case-insensitive, §3.1).
    LowercaseScheme = "lowercase-scheme",
    /// Lower-case a reg-name host and the hex of an IP-literal (§6.2.2.1);
    /// percent-encodings inside the host keep upper-case hex.
    LowercaseHost = "lowercase-host",
    /// Upper-case the hex digits of every percent-encoding (§6.2.2.1).
    UppercaseEscapes = "uppercase-escapes",
    /// Decode percent-encoded unreserved characters (`ALPHA DIGIT - . _ ~`)
    /// in every component (§6.2.2.2), host included.
    DecodeUnreserved = "decode-unreserved",
    /// Apply `remove_dot_segments` (§5.2.4) to the path of a URI that has a
    /// scheme (§6.2.2.3). A rootless path is processed too, as §5.2.4 is
    /// written (`foo:a/../b` becomes `foo:/b`; fluent-uri leaves rootless
    /// paths alone). A result that would start with `//` without an
    /// authority keeps a `/.` prefix (`foo:/.//x`, as WHATWG URL and
    /// fluent-uri do), or it would re-parse as an authority.
    RemoveDotSegments = "remove-dot-segments",
    /// Drop the `:` of an empty port (§3.2.3: "URI producers and normalizers
    /// should omit the port component and its ':' delimiter if port is
    /// empty").
    RemoveEmptyPort = "remove-empty-port",
    /// Drop a port equal to the scheme's default (§6.2.3), compared as a
    /// decimal number (§3.2.3), so `:080` goes too.
    RemoveDefaultPort = "remove-default-port",
    /// An empty path after an authority becomes `/` for `http`, `https`,
    /// `ws`, `wss` and `ftp` (§6.2.3).
    EmptyPathSlash = "empty-path-slash",
    /// Drop the fragment: it is never sent to a server (§3.5).
    RemoveFragment = "remove-fragment",
    /// Write an IPv6 literal in the RFC 5952 §4 text form (lower-case, no
    /// leading zeros, longest zero run compressed; IPv4-mapped addresses keep
    /// their dotted tail, §5).
    Ipv6Canonical = "ipv6-canonical",
    /// Rewrite the hex, octal, short and single-number IPv4 forms
    /// (`0x7f.1`, `2130706433`) to dotted decimal for `http`-like schemes,
    /// as browsers read them (WHATWG URL, IPv4 parser).
    Ipv4Canonical = "ipv4-canonical",
    /// UTS #46 ToASCII of a host written as (percent-encoded) UTF-8, for
    /// the schemes of the [scheme table](super::scheme), whose hosts are
    /// DNS names.
    Idna = "idna",
    /// Drop the trailing dots of a reg-name host (`example.com.`): DNS
    /// resolves the fully qualified name the same way.
    RemoveTrailingHostDot = "remove-trailing-host-dot",
    /// Drop a `?` that introduces an empty query.
    RemoveEmptyQuery = "remove-empty-query",
    /// Opt-in: stable sort of `&`-separated query parameters by raw bytes
    /// (never re-encoded); empty parameters (`a&&b`) of a non-empty query
    /// are dropped, and so is the `?` when nothing is left.
    SortQuery = "sort-query",
    /// Opt-in: drop the query parameters named in the normalizer's list
    /// (exact names, or prefixes written `utm_*`).
    RemoveQueryParams = "remove-query-params",
    /// Opt-in: drop session ids (`jsessionid`, `phpsessid`, `sid`,
    /// `aspsessionid*`, ...) from the query and `;jsessionid=` path params.
    StripSessionIds = "strip-session-ids",
    /// Opt-in: drop leading `www.` labels of a reg-name host.
    RemoveWww = "remove-www",
    /// Opt-in: drop the trailing `/` of a path other than `/`.
    RemoveTrailingSlash = "remove-trailing-slash",
    /// Opt-in: add a `/` after a last segment that has no `.` (directory
    /// guess). `remove-trailing-slash` wins when both are set.
    AddTrailingSlash = "add-trailing-slash",
    /// Opt-in: collapse runs of `/` in the path (URIs with an authority).
    RemoveDuplicateSlashes = "remove-duplicate-slashes",
    /// Opt-in: drop a last segment that is a directory index
    /// (`index.html`, `index.php`, `default.asp`, ...).
    RemoveDirectoryIndex = "remove-directory-index",
}

impl Flag {
    /// The flag named `name`, if any.
    pub fn from_name(name: &str) -> Option<Flag> {
        Self::ALL.iter().copied().find(|f| f.name() == name)
    }

    const fn bit(self) -> u32 {
        1 << self as u8
    }
}

impl fmt::Display for Flag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`Flag`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Flags(u32);

impl Flags {
    /// No flag.
    pub const EMPTY: Flags = Flags(0);

    /// The set holding exactly `flags`.
    pub const fn of(flags: &[Flag]) -> Flags {
        let mut bits = 0;
        let mut i = 0;
        while i < flags.len() {
            bits |= flags[i].bit();
            i += 1;
        }
        Flags(bits)
    }

    /// Is `flag` in the set?
    #[inline(always)]
    pub const fn has(self, flag: Flag) -> bool {
        self.0 & flag.bit() != 0
    }

    /// The set with `flag` added.
    pub const fn with(self, flag: Flag) -> Flags {
        Flags(self.0 | flag.bit())
    }

    /// The set with `flag` removed.
    pub const fn without(self, flag: Flag) -> Flags {
        Flags(self.0 & !flag.bit())
    }

    /// The union of two sets.
    pub const fn union(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    /// The flags in both sets.
    pub const fn intersection(self, other: Flags) -> Flags {
        Flags(self.0 & other.0)
    }

    /// Is every flag of `self` in `other`?
    pub const fn is_subset(self, other: Flags) -> bool {
        self.0 & !other.0 == 0
    }

    /// Is the set empty?
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The flags of the set, in documentation order.
    pub fn iter(self) -> impl Iterator<Item = Flag> {
        Flag::ALL.iter().copied().filter(move |f| self.has(*f))
    }
}

/// A named set of flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Profile {
    /// No normalization: the key is the (valid) input.
    None,
    /// RFC 3986 §6.2.2, syntax-based normalization.
    Syntax,
    /// §6.2.2 plus §6.2.3, scheme-based normalization (the default).
    #[default]
    Rfc,
    /// `rfc` plus the crawl rules that never merge URLs a server tells apart
    /// (fragment, IP and IDNA host forms, trailing host dot, empty query).
    Crawl,
}

impl Profile {
    /// Every profile.
    pub const ALL: &'static [Profile] =
        &[Profile::None, Profile::Syntax, Profile::Rfc, Profile::Crawl];

    /// The flags of the profile.
    pub const fn flags(self) -> Flags {
        use Flag::*;
        const SYNTAX: Flags = Flags::of(&[
            LowercaseScheme,
            LowercaseHost,
            UppercaseEscapes,
            DecodeUnreserved,
            RemoveDotSegments,
            RemoveEmptyPort,
        ]);
        const RFC: Flags = SYNTAX.union(Flags::of(&[RemoveDefaultPort, EmptyPathSlash]));
        const CRAWL: Flags = RFC.union(Flags::of(&[
            RemoveFragment,
            Ipv6Canonical,
            Ipv4Canonical,
            Idna,
            RemoveTrailingHostDot,
            RemoveEmptyQuery,
        ]));
        match self {
            Profile::None => Flags::EMPTY,
            Profile::Syntax => SYNTAX,
            Profile::Rfc => RFC,
            Profile::Crawl => CRAWL,
        }
    }

    /// The profile's name (`none`, `syntax`, `rfc`, `crawl`).
    pub const fn name(self) -> &'static str {
        match self {
            Profile::None => "none",
            Profile::Syntax => "syntax",
            Profile::Rfc => "rfc",
            Profile::Crawl => "crawl",
        }
    }

    /// The profile named `name`, if any.
    pub fn from_name(name: &str) -> Option<Profile> {
        Self::ALL.iter().copied().find(|p| p.name() == name)
    }
}
