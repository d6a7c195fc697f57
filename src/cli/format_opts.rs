//! The input-format options `dedup` and `normalize` share: `--format`,
//! `--warc-types`, `--column`.

use urikey::engine::formats::{Format, InputFormat, DEFAULT_COLUMN};

/// `--format`, `--warc-types`, `--column`.
#[derive(clap::Args, Debug, Clone)]
pub struct FormatOpts {
    /// Input format: lines, cdxj (the JSON's `url`), cdx (the original-URL
    /// column), warc (`WARC-Target-URI`), wat (every outlink, resolved) or
    /// parquet (a column). Default: each input's is recognised from its
    /// content, plain lines when nothing else fits. See docs/formats.md.
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub format: Option<Format>,

    /// WARC record types whose WARC-Target-URI is read (comma-separated).
    #[arg(
        long,
        value_name = "TYPES",
        value_delimiter = ',',
        default_value = "response"
    )]
    pub warc_types: Vec<String>,

    /// Parquet column holding the URLs.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_COLUMN)]
    pub column: String,
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        format!("unknown format {s:?} (one of: {})", names.join(", "))
    })
}

impl FormatOpts {
    /// The engine's setting; `field`: a `--field` was given, which only
    /// plain lines have.
    ///
    /// # Errors
    /// `--field` with another format than lines.
    pub fn input_format(&self, field: bool) -> anyhow::Result<InputFormat> {
        if field && self.format.is_some_and(|f| f != Format::Lines) {
            anyhow::bail!(
                "--field reads plain lines, not --format {}",
                self.format.unwrap_or(Format::Lines)
            );
        }
        Ok(InputFormat {
            format: if field {
                Some(Format::Lines)
            } else {
                self.format
            },
            warc_types: self
                .warc_types
                .iter()
                .map(|t| t.trim().to_ascii_lowercase())
                .filter(|t| !t.is_empty())
                .collect(),
            column: self.column.clone(),
        })
    }
}
