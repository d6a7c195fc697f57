//! Bytes in: opening an input (a map, a stream, a decompressor), the
//! buffers it is read into, gzip members decoded on the run's threads, the
//! chunks of whole lines the pipeline works on, and the readers of the
//! crawl formats. Data flows one way through the room: `bytes`,
//! `gzip_stream` and `compression` know nothing of the rest; `gzip` (with
//! `inflate` and `gzip_pipe`) decodes into `bytes` on the `ordered` pool of
//! decoder threads, which Parquet's row groups share; `source` opens an
//! input into one of them; `chunk`, `blocks` and `lines` cut sources into lines; `formats`
//! reads a source in its format.

pub(crate) mod blocks;
pub(crate) mod bytes;
pub(crate) mod chunk;
pub mod compression;
pub mod formats;
pub mod gzip;
mod gzip_pipe;
mod gzip_stream;
mod inflate;
pub mod lines;
pub(crate) mod map_window;
pub(crate) mod newlines;
mod ordered;
mod source;

pub use bytes::SharedBytes;
pub(crate) use bytes::{take_spare, Home, Spare};
pub use compression::Compression;
pub use source::{check_path, open, rejects_would_replace, Input, MmapChoice, Source};
