//! A string column of a Parquet file (the Apache Parquet format,
//! <https://parquet.apache.org/docs/file-format/>), read with the
//! `parquet` crate of arrow-rs (its column readers, without arrow). Common
//! Crawl's columnar index (schema: `cc-index-schema-flat.json` in
//! commoncrawl/cc-index-table) has the URL in `url`; `--column` picks
//! another (`url_surtkey`, ...).
//!
//! Row groups are decoded on `threads` threads at once and handed over in
//! file order; at most `threads + 1` row groups' values are in memory at a
//! time, whatever the file's size, and the mapped pages of the row groups
//! handed over are released as the engine's line inputs release theirs. A row's number is its 1-based index in
//! the file; its byte offset, that of its row group's column chunk.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

use parquet::basic::Type as PhysicalType;
use parquet::column::reader::ColumnReader;
use parquet::data_type::ByteArray;
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::super::error::Error;
use super::super::input::SharedBytes;
use super::super::Problem;
use super::{breaks_line, Item, RecordPos};

/// Values read from a column reader at a time.
const BATCH: usize = 8192;

/// One row group's values: their bytes, and per row its span (`None`: a
/// null).
struct Group {
    first_row: u64,
    byte: u64,
    bytes: Vec<u8>,
    spans: Vec<Option<(usize, usize)>>,
}

/// The buffers of row groups handed over, for the decoders to fill again:
/// fresh ones cost a page fault per 4 KiB and a copy at every doubling.
type Spare = Mutex<Vec<(Vec<u8>, Vec<Option<(usize, usize)>>)>>;

/// Calls `each` for the value of column `column` of every row of the
/// Parquet file `bytes` (named `name`), in order; `each` returns false to
/// stop. A null is an invalid row (`missing-field`), an empty string one
/// (`empty-field`), a value with a line break one (`line-break`).
///
/// # Errors
/// [`Error::Format`] when the file does not parse, has no such column, the
/// column holds no strings, or a row group cannot be decoded.
pub fn for_each_value(
    name: &str,
    bytes: SharedBytes,
    column: &str,
    threads: usize,
    each: &mut dyn FnMut(Item<'_>) -> bool,
) -> Result<(), Error> {
    let fault = |record: u64, byte: u64, message: String| Error::Format {
        path: name.to_owned(),
        format: "parquet",
        record,
        byte,
        message,
    };
    // Kept to release the pages of row groups handed over.
    let map = bytes.clone();
    let data = bytes::Bytes::from_owner(bytes);
    let reader = SerializedFileReader::new(data).map_err(|e| fault(0, 0, e.to_string()))?;
    let meta = reader.metadata();
    let schema = meta.file_metadata().schema_descr();
    let columns = schema.columns();
    let Some(index) = columns.iter().position(|c| c.path().string() == column) else {
        let names: Vec<String> = columns.iter().map(|c| c.path().string()).collect();
        return Err(fault(
            0,
            0,
            format!(
                "it has no column {column:?}; its columns: {}",
                names.join(", ")
            ),
        ));
    };
    if columns[index].physical_type() != PhysicalType::BYTE_ARRAY {
        return Err(fault(
            0,
            0,
            format!(
                "column {column:?} holds {:?} values, not strings",
                columns[index].physical_type()
            ),
        ));
    }
    let groups = meta.num_row_groups();
    let mut first_rows = Vec::with_capacity(groups);
    let mut rows = 0u64;
    for g in meta.row_groups() {
        first_rows.push(rows + 1);
        rows += g.num_rows().max(0) as u64;
    }
    let threads = threads.clamp(1, groups.max(1));
    let window = threads + 1;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (token_tx, token_rx) = mpsc::channel::<()>();
    let token_rx = Mutex::new(token_rx);
    for _ in 0..window {
        let _ = token_tx.send(());
    }
    let (done_tx, done_rx) = mpsc::channel::<(usize, Result<Group, Error>)>();
    let spare = Spare::default();
    let decode = |g: usize| -> Result<Group, Error> {
        let first_row = first_rows[g];
        let byte = meta.row_group(g).column(index).byte_range().0;
        let fail = |e: parquet::errors::ParquetError| {
            fault(first_row, byte, format!("row group {g}: {e}"))
        };
        let rg = reader.get_row_group(g).map_err(fail)?;
        let ColumnReader::ByteArrayColumnReader(mut col) =
            rg.get_column_reader(index).map_err(fail)?
        else {
            return Err(fault(first_row, byte, "not a string column".into()));
        };
        let max_def = columns[index].max_def_level();
        let (mut bytes, mut spans) = spare
            .lock()
            .ok()
            .and_then(|mut s| s.pop())
            .unwrap_or_default();
        bytes.clear();
        spans.clear();
        let mut group = Group {
            first_row,
            byte,
            bytes,
            spans,
        };
        let mut values: Vec<ByteArray> = Vec::with_capacity(BATCH);
        let mut defs: Vec<i16> = Vec::with_capacity(BATCH);
        loop {
            values.clear();
            defs.clear();
            let (records, _, _) = col
                .read_records(BATCH, (max_def > 0).then_some(&mut defs), None, &mut values)
                .map_err(fail)?;
            if records == 0 {
                break;
            }
            let mut v = values.iter();
            for r in 0..records {
                let present = max_def == 0 || defs.get(r).is_some_and(|&d| d == max_def);
                if !present {
                    group.spans.push(None);
                    continue;
                }
                let value = v.next().map_or(&[][..], ByteArray::data);
                let start = group.bytes.len();
                group.bytes.extend_from_slice(value);
                group.spans.push(Some((start, value.len())));
            }
        }
        Ok(group)
    };
    std::thread::scope(|scope| {
        for t in 0..threads {
            let (next, stop, token_rx, done_tx, decode) =
                (&next, &stop, &token_rx, done_tx.clone(), &decode);
            let spawned = std::thread::Builder::new()
                .name(format!("urikey-parquet-{t}"))
                .spawn_scoped(scope, move || loop {
                    let token = token_rx.lock().map(|rx| rx.recv());
                    if !matches!(token, Ok(Ok(()))) || stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let g = next.fetch_add(1, Ordering::Relaxed);
                    if g >= groups {
                        return;
                    }
                    if done_tx.send((g, decode(g))).is_err() {
                        return;
                    }
                });
            if spawned.is_err() && t == 0 {
                return Err(fault(0, 0, "cannot start a thread".into()));
            }
        }
        drop(done_tx);
        let mut ready: BTreeMap<usize, Result<Group, Error>> = BTreeMap::new();
        let result = (|| {
            for g in 0..groups {
                let group = loop {
                    if let Some(r) = ready.remove(&g) {
                        break r;
                    }
                    match done_rx.recv() {
                        Ok((i, r)) => {
                            ready.insert(i, r);
                        }
                        Err(_) => return Err(fault(0, 0, format!("row group {g} was not read"))),
                    }
                };
                let group = group?;
                if !emit(&group, each) {
                    return Ok(());
                }
                if let Ok(mut spare) = spare.lock() {
                    spare.push((group.bytes, group.spans));
                }
                // The file's pages up to this row group's column chunk
                // leave the resident set (row groups are in file order).
                let (start, len) = meta.row_group(g).column(index).byte_range();
                let end = usize::try_from(start.saturating_add(len)).unwrap_or(usize::MAX);
                map.release(usize::try_from(start).unwrap_or(0)..end);
                let _ = token_tx.send(());
            }
            Ok(())
        })();
        stop.store(true, Ordering::Relaxed);
        drop(token_tx);
        result
    })
}

/// Hands one row group's values to `each`; false when it asked to stop.
fn emit(group: &Group, each: &mut dyn FnMut(Item<'_>) -> bool) -> bool {
    for (i, span) in group.spans.iter().enumerate() {
        let pos = RecordPos {
            record: group.first_row + i as u64,
            byte: group.byte,
        };
        let item = match *span {
            None => Item::Fault {
                text: b"",
                pos,
                problem: Problem::MissingField,
                index: 0,
            },
            Some((_, 0)) => Item::Fault {
                text: b"",
                pos,
                problem: Problem::EmptyField,
                index: 0,
            },
            Some((start, len)) => {
                let text = &group.bytes[start..start + len];
                match breaks_line(text, false) {
                    Some(index) => Item::Fault {
                        text,
                        pos,
                        problem: Problem::LineBreak,
                        index,
                    },
                    None => Item::Url { text, pos },
                }
            }
        };
        if !each(item) {
            return false;
        }
    }
    true
}
