//! Fuzz target `parquet_reader`: the Parquet reader on any bytes is an
//! error or the rows, never a panic, in bounded memory (libFuzzer's RSS
//! and allocation limits fail the run otherwise). The input is read as a
//! file as it is, or as changes to a small valid file this target writes
//! with the `parquet` crate (two row groups of a nullable string column
//! and an integer one; plain, dictionary-encoded, or Snappy-compressed),
//! so that the fuzzer starts inside the format.

#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use parquet::basic::Compression;
use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use urikey::engine::formats::parquet::for_each_value;
use urikey::engine::formats::Item;
use urikey::engine::SharedBytes;

const SCHEMA: &str = "message row { optional binary url (UTF8); required int64 n; }";

/// A valid file: `dictionary` encoding or plain, `compression`.
fn seed_file(dictionary: bool, compression: Compression) -> Vec<u8> {
    let schema = Arc::new(parse_message_type(SCHEMA).unwrap());
    let props = Arc::new(
        WriterProperties::builder()
            .set_dictionary_enabled(dictionary)
            .set_compression(compression)
            .build(),
    );
    let mut out = Vec::new();
    let mut w = SerializedFileWriter::new(&mut out, schema, props).unwrap();
    for group in 0..2i64 {
        let urls: Vec<ByteArray> = [
            "http://example.com/a",
            "HTTP://Example.COM:80/%7e?b#c",
            "",
            "http://example.com/a",
            "mailto:x@y\nz",
        ]
        .iter()
        .map(|s| ByteArray::from(*s))
        .collect();
        // One null among them.
        let defs = [1i16, 1, 1, 0, 1, 1];
        let mut rg = w.next_row_group().unwrap();
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<ByteArrayType>()
            .write_batch(&urls, Some(&defs), None)
            .unwrap();
        col.close().unwrap();
        let mut col = rg.next_column().unwrap().unwrap();
        let ns: Vec<i64> = (0..6).map(|i| group * 6 + i).collect();
        col.typed::<Int64Type>()
            .write_batch(&ns, None, None)
            .unwrap();
        col.close().unwrap();
        rg.close().unwrap();
    }
    w.close().unwrap();
    out
}

fn seeds() -> &'static [Vec<u8>; 3] {
    static SEEDS: OnceLock<[Vec<u8>; 3]> = OnceLock::new();
    SEEDS.get_or_init(|| {
        [
            seed_file(false, Compression::UNCOMPRESSED),
            seed_file(true, Compression::UNCOMPRESSED),
            seed_file(true, Compression::SNAPPY),
        ]
    })
}

/// Reads column `column` of `bytes`: the rows it gave, or the error.
fn read(bytes: Vec<u8>, column: &str, threads: usize) -> Result<usize, urikey::engine::Error> {
    let mut rows = 0usize;
    for_each_value(
        "fuzz.parquet",
        SharedBytes::from_vec(bytes),
        column,
        threads,
        &mut |item| {
            if let Item::Url { text, .. } = item {
                assert!(!text.contains(&b'\n'), "a URL with a line break");
            }
            rows += 1;
            true
        },
    )?;
    Ok(rows)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let threads = 1 + usize::from(mode >> 7);
    let column = if mode & 0x40 != 0 { "n" } else { "url" };
    if mode & 3 == 3 {
        let _ = read(rest.to_vec(), column, threads);
        return;
    }
    let seed = &seeds()[usize::from(mode & 3)];
    if rest.is_empty() {
        // Each seed as written: the reader gives its twelve rows.
        if column == "url" {
            assert_eq!(read(seed.clone(), column, threads).unwrap(), 12);
        }
        return;
    }
    let mut bytes = seed.clone();
    if mode & 4 == 0 {
        // Bytes flipped: (position, mask) pairs.
        for c in rest.chunks_exact(3) {
            let at = usize::from(u16::from_le_bytes([c[0], c[1]])) % bytes.len();
            bytes[at] ^= c[2];
        }
    } else {
        // Bytes overwritten from a position (the footer's length, the
        // metadata, a page header), the file cut or extended with them.
        let at = usize::from(rest[0]) * bytes.len() / 256;
        let with = &rest[1..];
        if mode & 8 != 0 {
            bytes.truncate(at);
            bytes.extend_from_slice(with);
        } else {
            let end = (at + with.len()).min(bytes.len());
            bytes[at..end].copy_from_slice(&with[..end - at]);
        }
    }
    let _ = read(bytes, column, threads);
});
