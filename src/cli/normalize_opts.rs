//! Normalization options shared by `normalize` and `dedup`.

use anyhow::{bail, Context};
use urikey::uri::key::{Canonicalizer, KeyFormat};
use urikey::uri::normalize::{Flag, Normalizer, Profile};

/// `--profile`, `--with`, `--without`, `--lenient`, `--key`.
#[derive(clap::Args, Debug, Clone)]
pub struct NormalizeOpts {
    /// Normalization profile: none, syntax (RFC 3986 §6.2.2), rfc (§6.2.2 +
    /// §6.2.3) or crawl (rfc + fragment, IP, IDNA, trailing-dot and
    /// empty-query rules).
    #[arg(long, value_name = "PROFILE", default_value = "rfc")]
    pub profile: String,

    /// Turn on more flags (comma-separated names; repeatable). Use
    /// `remove-query-params=utm_*;ref` to drop query parameters.
    ///
    /// Flags: lowercase-scheme, lowercase-host, uppercase-escapes,
    /// decode-unreserved, remove-dot-segments, remove-empty-port (syntax);
    /// remove-default-port, empty-path-slash (rfc); remove-fragment,
    /// ipv6-canonical, ipv4-canonical, idna, remove-trailing-host-dot,
    /// remove-empty-query (crawl); opt-in only: sort-query,
    /// remove-query-params=LIST, strip-session-ids, remove-www,
    /// remove-trailing-slash, add-trailing-slash, remove-duplicate-slashes,
    /// remove-directory-index.
    #[arg(long = "with", value_name = "FLAGS")]
    pub with: Vec<String>,

    /// Turn off flags of the profile (comma-separated names; repeatable).
    #[arg(long = "without", value_name = "FLAGS")]
    pub without: Vec<String>,

    /// Read dirty lines leniently (RFC 3987 §3.1 mapping) before parsing.
    #[arg(long)]
    pub lenient: bool,

    /// Key format: uri (normalized URI), surt (reversed host) or hash
    /// (128-bit fingerprint in hex).
    #[arg(long = "key", value_name = "FORMAT", default_value = "uri")]
    pub key: String,
}

fn valid_flags() -> String {
    Flag::ALL
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_flag(name: &str) -> anyhow::Result<Flag> {
    match Flag::from_name(name) {
        Some(f) => Ok(f),
        None => bail!(
            "unknown normalization flag {name:?}; valid flags: {}",
            valid_flags()
        ),
    }
}

impl NormalizeOpts {
    /// The normalizer these options describe.
    pub fn normalizer(&self) -> anyhow::Result<Normalizer> {
        let profile = Profile::from_name(&self.profile).with_context(|| {
            format!(
                "unknown profile {:?}; valid profiles: none, syntax, rfc, crawl",
                self.profile
            )
        })?;
        let mut n = Normalizer::profile(profile);
        for list in &self.with {
            for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                if let Some((name, value)) = item.split_once('=') {
                    if parse_flag(name)? != Flag::RemoveQueryParams {
                        bail!("flag {name:?} takes no value");
                    }
                    n = n.remove_query_params(value.split(';').filter(|s| !s.is_empty()));
                } else {
                    let flag = parse_flag(item)?;
                    if flag == Flag::RemoveQueryParams {
                        bail!("remove-query-params needs a list: remove-query-params=utm_*;ref");
                    }
                    n = n.with(flag);
                }
            }
        }
        for list in &self.without {
            for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                n = n.without(parse_flag(item)?);
            }
        }
        Ok(n)
    }

    /// The key format of `--key`.
    pub fn key_format(&self) -> anyhow::Result<KeyFormat> {
        Ok(match self.key.as_str() {
            "uri" => KeyFormat::Uri,
            "surt" => KeyFormat::Surt,
            "hash" => KeyFormat::Hash,
            other => bail!("unknown key format {other:?}; valid formats: uri, surt, hash"),
        })
    }

    /// The canonicalizer and the key format these options describe.
    pub fn build(&self) -> anyhow::Result<(Canonicalizer, KeyFormat)> {
        let canon = Canonicalizer::new(self.normalizer()?).with_lenient(self.lenient);
        Ok((canon, self.key_format()?))
    }
}
