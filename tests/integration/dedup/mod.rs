//! `urikey dedup` end to end: every option and failure mode of the
//! command (`cli.rs`), the engine against a naive single-threaded
//! reference (`props.rs`), and runs larger than memory (`spill.rs`).

use std::io::Write;

pub use crate::common::stdout_of;
use std::sync::Arc;

use urikey::engine::{self, Config, Input, InvalidLine};

mod cli;
mod props;
mod spill;

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).expect("in-memory write");
    enc.finish().expect("in-memory write")
}

pub fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).expect("in-memory compression")
}

pub const SAMPLE: &[u8] = b"http://a.example/x\nhttp://b.example/\nhttp://a.example/x\n\
http://c.example/y?q\nhttp://b.example/\n";

/// Runs the engine on `input` (streamed or in memory) and returns the
/// output, or the error.
pub fn run_engine(
    config: &Config,
    input: &[u8],
    stream: bool,
) -> Result<(Vec<u8>, engine::Stats), engine::Error> {
    let source = if stream {
        Input::Reader {
            name: "r".into(),
            reader: Box::new(std::io::Cursor::new(input.to_vec())),
        }
    } else {
        Input::Bytes {
            name: "b".into(),
            bytes: Arc::from(input),
        }
    };
    let mut got = Vec::new();
    let stats = engine::run(config, vec![source], &mut got, &mut |_: &InvalidLine<
        '_,
    >| {})?;
    Ok((got, stats))
}
