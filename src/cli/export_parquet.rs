//! `urikey state export --format parquet`: a store's fingerprints as a
//! Parquet file of two required INT64 columns, `fp_hi` and `fp_lo` (the
//! signed halves of the CSV export and of `urikey.spark.with_keys`), zstd
//! compressed, for `spark.read.parquet`.
//!
//! Keys are written as they come out of the store, a row group at a time:
//! memory holds one row group's values (16 bytes a key) and the writer's
//! pages, whatever the store's size.

use std::io::Write;
use std::sync::Arc;

use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::data_type::Int64Type;
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;

/// Keys a row group: 16 MiB of values, and 96 row groups (Spark tasks)
/// for a 100 million-key store.
pub const ROW_GROUP_ROWS: usize = 1 << 20;

const SCHEMA: &str = "message urikey_fingerprints { REQUIRED INT64 fp_hi; REQUIRED INT64 fp_lo; }";

/// Writes fingerprints, given in ascending order, as Parquet to `out`.
pub struct FingerprintWriter<W: Write + Send> {
    writer: SerializedFileWriter<W>,
    hi: Vec<i64>,
    lo: Vec<i64>,
    rows: usize,
}

fn io_error(e: ParquetError) -> std::io::Error {
    std::io::Error::other(e)
}

impl<W: Write + Send> FingerprintWriter<W> {
    /// Starts the file. `metadata` goes into its footer as key-value pairs
    /// (the store's key configuration, so a reader can check it).
    ///
    /// # Errors
    /// The writer's (an I/O error writing the magic bytes).
    pub fn new(out: W, metadata: Vec<(String, String)>, rows: usize) -> std::io::Result<Self> {
        let schema = Arc::new(parse_message_type(SCHEMA).map_err(io_error)?);
        let level = ZstdLevel::try_new(3).map_err(io_error)?;
        // The high halves ascend (as unsigned numbers), so their deltas are
        // about 2^64 / keys: delta encoding stores them in far fewer bits
        // than 64. The low halves are random: plain, and no dictionary.
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(level))
            .set_dictionary_enabled(false)
            .set_column_encoding(ColumnPath::from("fp_hi"), Encoding::DELTA_BINARY_PACKED)
            .set_max_row_group_row_count(Some(rows))
            .set_key_value_metadata(Some(
                metadata
                    .into_iter()
                    .map(|(k, v)| KeyValue::new(k, v))
                    .collect(),
            ))
            .build();
        let writer = SerializedFileWriter::new(out, schema, Arc::new(props)).map_err(io_error)?;
        Ok(Self {
            writer,
            hi: Vec::with_capacity(rows),
            lo: Vec::with_capacity(rows),
            rows,
        })
    }

    /// Adds one fingerprint; a full row group is written out.
    ///
    /// # Errors
    /// The writer's.
    pub fn push(&mut self, fp: u128) -> std::io::Result<()> {
        self.hi.push((fp >> 64) as u64 as i64);
        self.lo.push(fp as u64 as i64);
        if self.hi.len() >= self.rows {
            self.flush_group()?;
        }
        Ok(())
    }

    fn flush_group(&mut self) -> std::io::Result<()> {
        if self.hi.is_empty() {
            return Ok(());
        }
        let mut group = self.writer.next_row_group().map_err(io_error)?;
        for values in [&self.hi, &self.lo] {
            let Some(mut column) = group.next_column().map_err(io_error)? else {
                return Err(std::io::Error::other("the schema has two columns"));
            };
            column
                .typed::<Int64Type>()
                .write_batch(values, None, None)
                .map_err(io_error)?;
            column.close().map_err(io_error)?;
        }
        group.close().map_err(io_error)?;
        self.hi.clear();
        self.lo.clear();
        Ok(())
    }

    /// Writes the last row group and the footer; returns the output.
    ///
    /// # Errors
    /// The writer's.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.flush_group()?;
        self.writer.into_inner().map_err(io_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;

    /// The rows of a written file, and its row groups' sizes.
    fn read(bytes: Vec<u8>) -> (Vec<(i64, i64)>, Vec<i64>) {
        let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).expect("parses");
        let groups = reader
            .metadata()
            .row_groups()
            .iter()
            .map(parquet::file::metadata::RowGroupMetaData::num_rows)
            .collect();
        let rows = reader
            .get_row_iter(None)
            .expect("rows")
            .map(|r| {
                let r = r.expect("row");
                (r.get_long(0).expect("hi"), r.get_long(1).expect("lo"))
            })
            .collect();
        (rows, groups)
    }

    #[test]
    fn row_groups_of_the_given_size_and_signed_halves() {
        let fps: Vec<u128> = (0..2500u128)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835))
            .collect();
        let mut w = FingerprintWriter::new(Vec::new(), vec![("k".into(), "v".into())], 1000)
            .expect("starts");
        for &fp in &fps {
            w.push(fp).expect("pushes");
        }
        let (rows, groups) = read(w.finish().expect("finishes"));
        assert_eq!(groups, [1000, 1000, 500]);
        let back: Vec<u128> = rows
            .iter()
            .map(|&(hi, lo)| (u128::from(hi as u64) << 64) | u128::from(lo as u64))
            .collect();
        assert_eq!(back, fps);
    }

    #[test]
    fn no_keys_is_a_file_of_no_rows() {
        let w = FingerprintWriter::new(Vec::new(), Vec::new(), 10).expect("starts");
        let (rows, groups) = read(w.finish().expect("finishes"));
        assert!(rows.is_empty() && groups.is_empty());
    }
}
