//! Normalization options shared by `normalize` and `dedup` (in progress).

use urikey::uri::key::{Canonicalizer, KeyFormat};

/// `--profile`, `--with`, `--without`, `--lenient`, `--key`.
#[derive(clap::Args, Debug, Clone)]
pub struct NormalizeOpts {
    /// Read dirty lines leniently (RFC 3987 §3.1 mapping) before parsing.
    #[arg(long)]
    pub lenient: bool,
}

impl NormalizeOpts {
    /// The canonicalizer and the key format these options describe.
    pub fn build(&self) -> anyhow::Result<(Canonicalizer, KeyFormat)> {
        Ok((
            Canonicalizer::default().with_lenient(self.lenient),
            KeyFormat::Uri,
        ))
    }
}
