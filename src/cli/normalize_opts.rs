//! Normalization options shared by `normalize` and `dedup`.

use anyhow::bail;
use urikey::uri::key::{FlagList, FlagSetting, KeyConfig, Keyer};

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

    /// Reproduce another tool's keys byte for byte instead: w3lib (w3lib
    /// 2.5.0 canonicalize_url), w3lib-keep-fragments (the same with
    /// keep_fragments=True) or ia-surt (surt 0.3.1 surt, the Internet
    /// Archive's CDX key). These merge URLs that RFC 3986 keeps apart.
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with_all = ["profile", "with", "without", "lenient", "key"]
    )]
    pub compat: Option<String>,
}

impl NormalizeOpts {
    /// The key configuration these options describe.
    pub fn config(&self) -> anyhow::Result<KeyConfig> {
        if let Some(name) = &self.compat {
            return Ok(format!("compat={name}").parse()?);
        }
        let mut config = KeyConfig {
            profile: self.profile.parse()?,
            lenient: self.lenient,
            format: self.key.parse()?,
            ..KeyConfig::default()
        };
        for list in &self.with {
            config.enable.extend(list.parse::<FlagList>()?);
        }
        for list in &self.without {
            let list = list.parse::<FlagList>()?;
            if let Some(s) = list
                .0
                .iter()
                .find(|s| matches!(s, FlagSetting::RemoveQueryParams(_)))
            {
                bail!("--without takes flag names only, not {s}");
            }
            config.disable.extend(list);
        }
        Ok(config)
    }

    /// The keyer these options describe.
    pub fn keyer(&self) -> anyhow::Result<Keyer> {
        Ok(self.config()?.keyer())
    }
}
