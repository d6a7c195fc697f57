//! A key configuration's identity: what decides its fingerprints, in one
//! canonical spelling that stores record and compare.

use std::fmt;

/// What decides a key configuration's fingerprints (see
/// [`KeyConfig::identity`](super::KeyConfig::identity)): two configurations
/// with equal identities give every input the same fingerprint.
///
/// Its text is what a seen-store's manifest and a Redis set's meta key
/// record, so that a later writer with another configuration is refused;
/// [`diff`](Self::diff) says what the two do not share.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Identity(String);

impl Identity {
    /// An identity from its text (as a store recorded it).
    pub fn from_text(text: impl Into<String>) -> Self {
        Identity(text.into())
    }

    /// Its text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True for the identity of no configuration (a record without one).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The parts of this identity that `other` lacks, and those of `other`
    /// that this one lacks: flags as `+name`, then the other parts
    /// (`params=...`, `lenient`, `compat=...`) as written.
    ///
    /// ```
    /// use urikey::uri::key::KeyConfig;
    /// let a = "rfc +sort-query".parse::<KeyConfig>()?.identity();
    /// let b = "rfc lenient".parse::<KeyConfig>()?.identity();
    /// let d = a.diff(&b);
    /// assert_eq!(d.only_self, ["+sort-query"]);
    /// assert_eq!(d.only_other, ["lenient"]);
    /// assert_eq!(d.to_string(), "+sort-query | lenient");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn diff(&self, other: &Identity) -> IdentityDiff {
        let (a, b) = (self.parts(), other.parts());
        let only = |x: &[String], y: &[String]| -> Vec<String> {
            x.iter().filter(|w| !y.contains(w)).cloned().collect()
        };
        IdentityDiff {
            only_self: only(&a, &b),
            only_other: only(&b, &a),
        }
    }

    /// Its parts: each flag as `+name`, and the words after the flags.
    fn parts(&self) -> Vec<String> {
        let mut out = Vec::new();
        for word in self.0.split(' ').filter(|w| !w.is_empty()) {
            match word.strip_prefix("flags=") {
                Some(flags) => out.extend(
                    flags
                        .split(',')
                        .filter(|f| !f.is_empty())
                        .map(|f| format!("+{f}")),
                ),
                None => out.push(word.to_owned()),
            }
        }
        out
    }
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What two identities do not share (see [`Identity::diff`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdentityDiff {
    /// Parts of the first identity that the second lacks.
    pub only_self: Vec<String>,
    /// Parts of the second identity that the first lacks.
    pub only_other: Vec<String>,
}

impl IdentityDiff {
    /// One side's parts for a message: space-separated, or `nothing the
    /// other lacks`.
    pub fn describe(parts: &[String]) -> String {
        if parts.is_empty() {
            "nothing the other lacks".to_owned()
        } else {
            parts.join(" ")
        }
    }
}

impl fmt::Display for IdentityDiff {
    /// `first's parts | second's parts`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} | {}",
            Self::describe(&self.only_self),
            Self::describe(&self.only_other)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_diff_names_flags_and_words_each_side_lacks() {
        let a = Identity::from_text("flags=lowercase-scheme,sort-query params=a;b lenient");
        let b = Identity::from_text("flags=lowercase-scheme,remove-fragment");
        let d = a.diff(&b);
        assert_eq!(d.only_self, ["+sort-query", "params=a;b", "lenient"]);
        assert_eq!(d.only_other, ["+remove-fragment"]);
        assert_eq!(a.diff(&a), IdentityDiff::default());
        assert_eq!(
            IdentityDiff::describe(&a.diff(&a).only_self),
            "nothing the other lacks"
        );
        let c = Identity::from_text("compat=w3lib");
        assert_eq!(c.diff(&b).only_self, ["compat=w3lib"]);
    }
}
