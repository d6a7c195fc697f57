//! The input-format options `dedup` and `normalize` share: `--format`,
//! `--warc-types`, `--column`.

use urikey::engine::formats::{Format, InputFormat, DEFAULT_COLUMN};
use urikey::engine::{parse_format as parse_format_name, Config, ConfigBuilder};
use urikey::uri::key::Keyer;

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
    parse_format_name(s).map_err(|e| e.to_string())
}

impl FormatOpts {
    /// These options on a run's configuration.
    pub fn apply(&self, builder: ConfigBuilder) -> ConfigBuilder {
        builder
            .format(self.format)
            .warc_types(&self.warc_types)
            .column(&self.column)
    }

    /// The input format alone, by the same rules (`normalize` reads
    /// without a run).
    pub fn input_format(&self, keyer: Keyer) -> anyhow::Result<InputFormat> {
        Ok(self.apply(Config::builder(keyer)).build()?.format)
    }
}
