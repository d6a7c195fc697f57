//! `urikey dedup` end to end: every option and failure mode of the
//! command (`cli.rs`), the engine against a naive single-threaded
//! reference (`props.rs`), and runs larger than memory (`spill.rs`).

pub use crate::common::{gzip, run_engine, stdout_of};

mod cli;
mod props;
mod spill;

pub fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).expect("in-memory compression")
}

pub const SAMPLE: &[u8] = b"http://a.example/x\nhttp://b.example/\nhttp://a.example/x\n\
http://c.example/y?q\nhttp://b.example/\n";
