//! How a run behaves ([`Config`]), and the one place the settings users
//! name (the command line's options, Python's keyword arguments) are read
//! and checked ([`ConfigBuilder`]), so both front ends take the same rules
//! and give the same errors.

use core::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use super::formats::{Format, InputFormat};
use super::{lines, Emit, Field, MmapChoice, PriorKeys, Select};
use crate::uri::key::Keyer;

/// How a run behaves. Build with [`Config::new`] and change fields, or
/// with [`Config::builder`], which checks the settings users name.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Config {
    /// Turns lines into keys (and says which form keys are printed in).
    pub keyer: Keyer,
    /// What to print for a line.
    pub emit: Emit,
    /// Take the URL from one column (plain lines only).
    pub field: Option<Field>,
    /// How inputs are read (format, WARC types, Parquet column).
    pub format: InputFormat,
    /// Which lines to print.
    pub select: Select,
    /// Compare full keys instead of fingerprints.
    pub exact: bool,
    /// Worker threads; 0 means one per available core.
    pub threads: usize,
    /// Target chunk size in bytes.
    pub chunk_size: usize,
    /// Longest accepted line, in bytes (without `\n`/`\r`).
    pub max_line_bytes: usize,
    /// Memory the run may use, in bytes, within 64 MiB
    /// ([`memory::SLACK`](super::memory::SLACK)): past it, the rest of the input is decided on
    /// disk (see "Larger than memory" in the [engine's doc](super)). `None`: [`memory::default_limit`](super::memory::default_limit).
    pub memory_limit: Option<u64>,
    /// Where the spill directory is created (`None`: the system's
    /// temporary directory, `$TMPDIR` or `/tmp`).
    pub temp_dir: Option<PathBuf>,
    /// Keys known before the run (a [`SeenStore`](super::store::SeenStore)'s session): a
    /// key it holds is a duplicate from its first line on, and the run's
    /// other new keys are handed to it (see [`PriorKeys`]).
    pub prior: Option<Arc<dyn PriorKeys>>,
    /// Whether inputs that are regular files may be memory-mapped
    /// (default: never; see [`MmapChoice::auto`] for what mapping asks of
    /// the caller).
    pub mmap: MmapChoice,
    /// Test hooks for spilling; not a public API.
    #[cfg(feature = "__internal-testing")]
    #[doc(hidden)]
    pub spill_hooks: SpillHooks,
}

/// Test hooks for spilling (feature `__internal-testing`); not a public API.
#[cfg(feature = "__internal-testing")]
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default)]
pub struct SpillHooks {
    /// Spill from the first batch at which this many distinct keys are
    /// known, whatever the memory limit.
    pub after_keys: Option<u64>,
    /// Most distinct keys a partition holds in memory while it is resolved.
    pub partition_keys: Option<usize>,
    /// Spill writes fail with ENOSPC past this many bytes.
    pub fail_after_bytes: Option<u64>,
}

/// The worker threads a run of `threads` makes (0: one per core).
pub fn worker_threads(threads: usize) -> usize {
    if threads == 0 {
        std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
    } else {
        threads
    }
}

/// Default `chunk_size`: 768 KiB. Three batches of chunks are in flight
/// with their line records and keys (24 chunks with 2 threads), so this
/// sets the fixed working set: about 43 MiB with 2 threads, for the same
/// CPU time as larger chunks.
pub const DEFAULT_CHUNK_BYTES: usize = 768 << 10;

/// Most worker threads a run takes: each has its own scratch buffers and
/// batches in flight, and a thread count past the cores only costs.
pub const MAX_THREADS: usize = 4096;

/// Largest accepted `chunk_size` and `max_line_bytes` (chunk offsets are
/// 32-bit).
pub const MAX_CHUNK_BYTES: usize = 512 << 20;

impl Config {
    /// Defaults: keys in the keyer's format, unique lines, fingerprints,
    /// all cores, [`DEFAULT_CHUNK_BYTES`] chunks, 1 MiB line limit.
    pub fn new(keyer: Keyer) -> Self {
        Self {
            keyer,
            emit: Emit::Key,
            field: None,
            format: InputFormat::default(),
            select: Select::Unique,
            exact: false,
            threads: 0,
            chunk_size: DEFAULT_CHUNK_BYTES,
            max_line_bytes: lines::MAX_LINE_BYTES,
            memory_limit: None,
            temp_dir: None,
            prior: None,
            mmap: MmapChoice::never(),
            #[cfg(feature = "__internal-testing")]
            spill_hooks: SpillHooks::default(),
        }
    }
}

impl Config {
    /// A builder of a configuration from the settings a user names, with
    /// [`Config::new`]'s defaults for the rest.
    pub fn builder(keyer: Keyer) -> ConfigBuilder {
        ConfigBuilder {
            config: Config::new(keyer),
        }
    }
}

/// Builds a [`Config`] from what a user names: names of formats and
/// emit modes, 1-based field numbers, delimiters as text; [`build`]
/// checks the rules that span settings.
///
/// [`build`]: ConfigBuilder::build
#[derive(Clone, Debug)]
pub struct ConfigBuilder {
    config: Config,
}

impl ConfigBuilder {
    /// What to print for a line.
    pub fn emit(mut self, emit: Emit) -> Self {
        self.config.emit = emit;
        self
    }

    /// What to print for a line, by name: `canonical` (the key) or
    /// `original`.
    ///
    /// # Errors
    /// [`ConfigError::UnknownEmit`].
    pub fn emit_named(self, name: &str) -> Result<Self, ConfigError> {
        let emit = match name {
            "canonical" => Emit::Key,
            "original" => Emit::Original,
            _ => return Err(ConfigError::UnknownEmit(name.to_owned())),
        };
        Ok(self.emit(emit))
    }

    /// Take the URL from column `number` (1-based, as users count) of
    /// lines split at `delimiter`, read with RFC 4180 quoting when `csv`.
    ///
    /// # Errors
    /// [`ConfigError::FieldNumber`] for 0.
    pub fn field(mut self, number: u64, delimiter: u8, csv: bool) -> Result<Self, ConfigError> {
        let index = number.checked_sub(1).ok_or(ConfigError::FieldNumber)?;
        let index = usize::try_from(index).unwrap_or(usize::MAX);
        self.config.field = Some(Field::new(index, delimiter).with_csv(csv));
        Ok(self)
    }

    /// [`field`](Self::field) with the delimiter as text: one byte.
    ///
    /// # Errors
    /// [`ConfigError::Delimiter`], or as [`field`](Self::field).
    pub fn field_delimited_by(
        self,
        number: u64,
        delimiter: &str,
        csv: bool,
    ) -> Result<Self, ConfigError> {
        match delimiter.as_bytes() {
            [b] => self.field(number, *b, csv),
            _ => Err(ConfigError::Delimiter(delimiter.to_owned())),
        }
    }

    /// The format of every input; `None`: recognised per input.
    pub fn format(mut self, format: Option<Format>) -> Self {
        self.config.format.format = format;
        self
    }

    /// [`format`](Self::format) by name (`lines`, `cdxj`, ...).
    ///
    /// # Errors
    /// [`ConfigError::UnknownFormat`].
    pub fn format_named(self, name: Option<&str>) -> Result<Self, ConfigError> {
        let format = match name {
            None => None,
            Some(name) => Some(parse_format(name)?),
        };
        Ok(self.format(format))
    }

    /// WARC record types whose `WARC-Target-URI` is read (any case; blank
    /// names are left out).
    pub fn warc_types<S: AsRef<str>>(mut self, types: impl IntoIterator<Item = S>) -> Self {
        self.config.format.warc_types = types
            .into_iter()
            .map(|t| t.as_ref().trim().to_ascii_lowercase())
            .filter(|t| !t.is_empty())
            .collect();
        self
    }

    /// The Parquet column holding the URLs.
    pub fn column(mut self, column: &str) -> Self {
        column.clone_into(&mut self.config.format.column);
        self
    }

    /// Which lines to print.
    pub fn select(mut self, select: Select) -> Self {
        self.config.select = select;
        self
    }

    /// Compare full keys instead of fingerprints.
    pub fn exact(mut self, exact: bool) -> Self {
        self.config.exact = exact;
        self
    }

    /// Worker threads (0: one per core).
    pub fn threads(mut self, threads: usize) -> Self {
        self.config.threads = threads;
        self
    }

    /// Target chunk size in bytes.
    pub fn chunk_size(mut self, bytes: usize) -> Self {
        self.config.chunk_size = bytes;
        self
    }

    /// Longest accepted line, in bytes.
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.config.max_line_bytes = bytes;
        self
    }

    /// Memory the run may use (`None`: the default limit).
    pub fn memory_limit(mut self, bytes: Option<u64>) -> Self {
        self.config.memory_limit = bytes;
        self
    }

    /// Where the spill directory is made (`None`: the system's).
    pub fn temp_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.config.temp_dir = dir;
        self
    }

    /// Keys known before the run.
    pub fn prior(mut self, prior: Option<Arc<dyn PriorKeys>>) -> Self {
        self.config.prior = prior;
        self
    }

    /// Whether regular files may be memory-mapped.
    pub fn mmap(mut self, mmap: MmapChoice) -> Self {
        self.config.mmap = mmap;
        self
    }

    /// The configuration, once the rules that span settings hold: a field
    /// is a column of plain lines, so it takes no other format.
    ///
    /// # Errors
    /// [`ConfigError::FieldNeedsLines`].
    pub fn build(self) -> Result<Config, ConfigError> {
        let config = self.config;
        if config.field.is_some() {
            match config.format.format {
                Some(f) if f != Format::Lines => return Err(ConfigError::FieldNeedsLines(f)),
                _ => {}
            }
        }
        Ok(Config {
            format: InputFormat {
                format: if config.field.is_some() {
                    Some(Format::Lines)
                } else {
                    config.format.format
                },
                ..config.format
            },
            ..config
        })
    }
}

/// The format named `name`.
///
/// # Errors
/// [`ConfigError::UnknownFormat`], which lists the names.
pub fn parse_format(name: &str) -> Result<Format, ConfigError> {
    Format::from_name(name).ok_or_else(|| ConfigError::UnknownFormat(name.to_owned()))
}

/// A setting a user named that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// No input format has this name.
    UnknownFormat(String),
    /// No emit mode has this name.
    UnknownEmit(String),
    /// Field numbers start at 1.
    FieldNumber,
    /// A delimiter is one byte.
    Delimiter(String),
    /// A field (a column of plain lines) was asked of another format.
    FieldNeedsLines(Format),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::UnknownFormat(name) => {
                let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                write!(f, "unknown format {name:?} (one of: {})", names.join(", "))
            }
            ConfigError::UnknownEmit(name) => {
                write!(f, "unknown emit {name:?} (one of: canonical, original)")
            }
            ConfigError::FieldNumber => f.write_str("field numbers start at 1"),
            ConfigError::Delimiter(d) => write!(f, "the delimiter must be one byte, not {d:?}"),
            ConfigError::FieldNeedsLines(format) => {
                write!(
                    f,
                    "a field is a column of plain lines, not of format {format}"
                )
            }
        }
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn builder() -> ConfigBuilder {
        Config::builder("rfc".parse::<crate::uri::key::KeyConfig>().unwrap().keyer())
    }

    #[test]
    fn config_builder_checks_what_users_name() {
        let c = builder()
            .field(2, b'\t', false)
            .unwrap()
            .warc_types([" Response ", "", "REQUEST"])
            .build()
            .unwrap();
        assert_eq!(c.field, Some(Field::new(1, b'\t')));
        assert_eq!(c.format.format, Some(Format::Lines));
        assert_eq!(c.format.warc_types, ["response", "request"]);
        assert_eq!(
            builder().field(0, b',', true).unwrap_err(),
            ConfigError::FieldNumber
        );
        let e = builder()
            .format_named(Some("cdxj"))
            .unwrap()
            .field(1, b',', false)
            .unwrap()
            .build()
            .unwrap_err();
        assert_eq!(e, ConfigError::FieldNeedsLines(Format::Cdxj));
        let e = builder().format_named(Some("jsonl")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown format \"jsonl\" (one of: lines, cdxj, cdx, warc, wat, parquet, arc)"
        );
        assert!(builder().emit_named("keys").is_err());
        assert_eq!(
            builder().field_delimited_by(1, "::", false).unwrap_err(),
            ConfigError::Delimiter("::".into())
        );
    }
}
