//! Reference resolution (RFC 3986 §5.2): the transform of §5.2.2, `merge`
//! (§5.2.3), `remove_dot_segments` (§5.2.4) and recomposition (§5.3).
//!
//! One departure from a literal reading, shared with fluent-uri and
//! iri-string: when the target has no authority and its path would start
//! with `//`, it is written `/.//…`, because the literal result would
//! re-parse with an authority (listed in `tests/data/known-deviations.txt`).

use core::fmt;

use super::UriRef;

/// Why a reference could not be resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResolveError {
    /// The base is a relative reference; §5.2.1 requires a base URI with a
    /// scheme.
    BaseNotAbsolute,
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BaseNotAbsolute => f.write_str("base URI has no scheme"),
        }
    }
}

impl std::error::Error for ResolveError {}

/// Resolution settings: strict (the default) or the backward-compatible
/// non-strict mode of §5.2.2, in which a reference whose scheme equals the
/// base's (`http:g` against `http://a/b`) is treated as relative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resolver {
    non_strict: bool,
}

impl Resolver {
    /// A strict resolver.
    pub const fn new() -> Self {
        Self { non_strict: false }
    }

    /// Ignore a reference scheme equal (case-insensitively) to the base's,
    /// as older parsers did (§5.2.2, §5.4.2 `http:g`).
    pub const fn non_strict(mut self, yes: bool) -> Self {
        self.non_strict = yes;
        self
    }

    /// Resolves `reference` against `base` and appends the target URI to
    /// `out`. The fragment of the base is ignored (§5.1).
    ///
    /// # Errors
    /// [`ResolveError::BaseNotAbsolute`] when `base` has no scheme.
    pub fn resolve_into(
        &self,
        base: &UriRef<'_>,
        reference: &UriRef<'_>,
        out: &mut String,
    ) -> Result<(), ResolveError> {
        let base_scheme = base.scheme().ok_or(ResolveError::BaseNotAbsolute)?;
        let mut r_scheme = reference.scheme();
        if self.non_strict && r_scheme.is_some_and(|s| s.eq_ignore_ascii_case(base_scheme)) {
            r_scheme = None;
        }

        let mut path = String::new();
        let (scheme, authority, query);
        if let Some(s) = r_scheme {
            scheme = s;
            authority = reference.authority();
            remove_dot_segments_into(reference.path(), &mut path);
            query = reference.query();
        } else {
            scheme = base_scheme;
            if reference.has_authority() {
                authority = reference.authority();
                remove_dot_segments_into(reference.path(), &mut path);
                query = reference.query();
            } else {
                authority = base.authority();
                let r_path = reference.path();
                if r_path.is_empty() {
                    path.push_str(base.path());
                    query = reference.query().or(base.query());
                } else {
                    if r_path.starts_with('/') {
                        remove_dot_segments_into(r_path, &mut path);
                    } else {
                        let merged = merge(base, r_path);
                        remove_dot_segments_into(&merged, &mut path);
                    }
                    query = reference.query();
                }
            }
        }
        recompose_into(
            Some(scheme),
            authority,
            &path,
            query,
            reference.fragment(),
            out,
        );
        Ok(())
    }
}

/// Resolves `reference` against `base` strictly (§5.2.2) and returns the
/// target URI.
///
/// ```
/// use urikey::uri::{resolve, UriRef};
/// let base = UriRef::parse("http://a/b/c/d;p?q")?;
/// assert_eq!(resolve(&base, &UriRef::parse("../g")?)?, "http://a/b/g");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`ResolveError::BaseNotAbsolute`] when `base` has no scheme.
pub fn resolve(base: &UriRef<'_>, reference: &UriRef<'_>) -> Result<String, ResolveError> {
    let mut out = String::new();
    Resolver::new().resolve_into(base, reference, &mut out)?;
    Ok(out)
}

/// `merge` (§5.2.3): the reference path appended to the base path without
/// its last segment, or to `/` when the base has an authority and an empty
/// path.
fn merge(base: &UriRef<'_>, r_path: &str) -> String {
    let b_path = base.path();
    if base.has_authority() && b_path.is_empty() {
        return format!("/{r_path}");
    }
    match b_path.rfind('/') {
        Some(i) => format!("{}{r_path}", &b_path[..=i]),
        None => r_path.to_owned(),
    }
}

/// Appends `path` with its `.` and `..` segments removed (§5.2.4) to `out`.
///
/// ```
/// let mut out = String::new();
/// urikey::uri::resolve::remove_dot_segments_into("/a/b/c/./../../g", &mut out);
/// assert_eq!(out, "/a/g");
/// ```
pub fn remove_dot_segments_into(path: &str, out: &mut String) {
    let mut buf = Vec::with_capacity(path.len());
    super::path::remove_dot_segments(path.as_bytes(), &mut buf);
    // The output is whole segments of the input, so it is valid UTF-8 and
    // this borrows without replacing anything.
    out.push_str(&String::from_utf8_lossy(&buf));
}

/// Recomposition (§5.3), writing `/.` before a path that would otherwise
/// start with `//` without an authority (see the module docs).
pub(crate) fn recompose_into(
    scheme: Option<&str>,
    authority: Option<&str>,
    path: &str,
    query: Option<&str>,
    fragment: Option<&str>,
    out: &mut String,
) {
    if let Some(s) = scheme {
        out.push_str(s);
        out.push(':');
    }
    if let Some(a) = authority {
        out.push_str("//");
        out.push_str(a);
    } else if path.starts_with("//") {
        out.push_str("/.");
    }
    out.push_str(path);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "http://a/b/c/d;p?q";

    #[track_caller]
    fn check(reference: &str, expected: &str) {
        let base = UriRef::parse(BASE).unwrap();
        let r = UriRef::parse(reference).unwrap();
        assert_eq!(resolve(&base, &r).unwrap(), expected, "{reference}");
    }

    // RFC 3986 §5.4.1 Normal Examples, one test each.
    #[test]
    fn rfc5_4_1_scheme() {
        check("g:h", "g:h");
    }
    #[test]
    fn rfc5_4_1_g() {
        check("g", "http://a/b/c/g");
    }
    #[test]
    fn rfc5_4_1_dot_slash_g() {
        check("./g", "http://a/b/c/g");
    }
    #[test]
    fn rfc5_4_1_g_slash() {
        check("g/", "http://a/b/c/g/");
    }
    #[test]
    fn rfc5_4_1_absolute_path() {
        check("/g", "http://a/g");
    }
    #[test]
    fn rfc5_4_1_network_path() {
        check("//g", "http://g");
    }
    #[test]
    fn rfc5_4_1_query() {
        check("?y", "http://a/b/c/d;p?y");
    }
    #[test]
    fn rfc5_4_1_g_query() {
        check("g?y", "http://a/b/c/g?y");
    }
    #[test]
    fn rfc5_4_1_fragment() {
        check("#s", "http://a/b/c/d;p?q#s");
    }
    #[test]
    fn rfc5_4_1_g_fragment() {
        check("g#s", "http://a/b/c/g#s");
    }
    #[test]
    fn rfc5_4_1_g_query_fragment() {
        check("g?y#s", "http://a/b/c/g?y#s");
    }
    #[test]
    fn rfc5_4_1_semicolon_x() {
        check(";x", "http://a/b/c/;x");
    }
    #[test]
    fn rfc5_4_1_g_semicolon_x() {
        check("g;x", "http://a/b/c/g;x");
    }
    #[test]
    fn rfc5_4_1_g_semicolon_x_query_fragment() {
        check("g;x?y#s", "http://a/b/c/g;x?y#s");
    }
    #[test]
    fn rfc5_4_1_empty() {
        check("", "http://a/b/c/d;p?q");
    }
    #[test]
    fn rfc5_4_1_dot() {
        check(".", "http://a/b/c/");
    }
    #[test]
    fn rfc5_4_1_dot_slash() {
        check("./", "http://a/b/c/");
    }
    #[test]
    fn rfc5_4_1_dot_dot() {
        check("..", "http://a/b/");
    }
    #[test]
    fn rfc5_4_1_dot_dot_slash() {
        check("../", "http://a/b/");
    }
    #[test]
    fn rfc5_4_1_dot_dot_slash_g() {
        check("../g", "http://a/b/g");
    }
    #[test]
    fn rfc5_4_1_dot_dot_dot_dot() {
        check("../..", "http://a/");
    }
    #[test]
    fn rfc5_4_1_dot_dot_dot_dot_slash() {
        check("../../", "http://a/");
    }
    #[test]
    fn rfc5_4_1_dot_dot_dot_dot_slash_g() {
        check("../../g", "http://a/g");
    }

    // RFC 3986 §5.4.2 Abnormal Examples, one test each.
    #[test]
    fn rfc5_4_2_above_root_1() {
        check("../../../g", "http://a/g");
    }
    #[test]
    fn rfc5_4_2_above_root_2() {
        check("../../../../g", "http://a/g");
    }
    #[test]
    fn rfc5_4_2_slash_dot_g() {
        check("/./g", "http://a/g");
    }
    #[test]
    fn rfc5_4_2_slash_dot_dot_g() {
        check("/../g", "http://a/g");
    }
    #[test]
    fn rfc5_4_2_g_dot() {
        check("g.", "http://a/b/c/g.");
    }
    #[test]
    fn rfc5_4_2_dot_g() {
        check(".g", "http://a/b/c/.g");
    }
    #[test]
    fn rfc5_4_2_g_dot_dot() {
        check("g..", "http://a/b/c/g..");
    }
    #[test]
    fn rfc5_4_2_dot_dot_g() {
        check("..g", "http://a/b/c/..g");
    }
    #[test]
    fn rfc5_4_2_dot_dot_slash_dot_slash_g() {
        check("./../g", "http://a/b/g");
    }
    #[test]
    fn rfc5_4_2_dot_slash_g_slash_dot() {
        check("./g/.", "http://a/b/c/g/");
    }
    #[test]
    fn rfc5_4_2_g_slash_dot_slash_h() {
        check("g/./h", "http://a/b/c/g/h");
    }
    #[test]
    fn rfc5_4_2_g_slash_dot_dot_slash_h() {
        check("g/../h", "http://a/b/c/h");
    }
    #[test]
    fn rfc5_4_2_g_semicolon_x_eq_1_slash_dot_slash_y() {
        check("g;x=1/./y", "http://a/b/c/g;x=1/y");
    }
    #[test]
    fn rfc5_4_2_g_semicolon_x_eq_1_slash_dot_dot_slash_y() {
        check("g;x=1/../y", "http://a/b/c/y");
    }
    #[test]
    fn rfc5_4_2_g_query_y_slash_dot_slash_x() {
        check("g?y/./x", "http://a/b/c/g?y/./x");
    }
    #[test]
    fn rfc5_4_2_g_query_y_slash_dot_dot_slash_x() {
        check("g?y/../x", "http://a/b/c/g?y/../x");
    }
    #[test]
    fn rfc5_4_2_g_fragment_s_slash_dot_slash_x() {
        check("g#s/./x", "http://a/b/c/g#s/./x");
    }
    #[test]
    fn rfc5_4_2_g_fragment_s_slash_dot_dot_slash_x() {
        check("g#s/../x", "http://a/b/c/g#s/../x");
    }
    #[test]
    fn rfc5_4_2_http_colon_g_strict() {
        check("http:g", "http:g");
    }
    #[test]
    fn rfc5_4_2_http_colon_g_non_strict() {
        let base = UriRef::parse(BASE).unwrap();
        let r = UriRef::parse("http:g").unwrap();
        let mut out = String::new();
        Resolver::new()
            .non_strict(true)
            .resolve_into(&base, &r, &mut out)
            .unwrap();
        assert_eq!(out, "http://a/b/c/g");
    }

    #[test]
    fn resolve_needs_absolute_base() {
        let base = UriRef::parse("/a/b").unwrap();
        let r = UriRef::parse("c").unwrap();
        assert_eq!(resolve(&base, &r), Err(ResolveError::BaseNotAbsolute));
    }

    #[test]
    fn resolve_base_fragment_is_ignored_and_double_slash_guarded() {
        let base = UriRef::parse("x:/a/b#frag").unwrap();
        assert_eq!(
            resolve(&base, &UriRef::parse("c").unwrap()).unwrap(),
            "x:/a/c"
        );
        let base = UriRef::parse("x:/a/b").unwrap();
        let out = resolve(&base, &UriRef::parse("..//c").unwrap()).unwrap();
        assert_eq!(out, "x:/.//c");
        assert!(!UriRef::parse(&out).unwrap().has_authority());
    }

    #[test]
    fn remove_dot_segments_rfc_examples() {
        for (input, want) in [
            ("/a/b/c/./../../g", "/a/g"),
            ("mid/content=5/../6", "mid/6"),
            ("/..", "/"),
            ("..", ""),
            ("a/..", "/"),
            ("/a/b/..", "/a/"),
        ] {
            let mut out = String::new();
            remove_dot_segments_into(input, &mut out);
            assert_eq!(out, want, "{input}");
        }
    }
}
