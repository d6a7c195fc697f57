//! A string column of a Parquet file (the Apache Parquet format,
//! <https://parquet.apache.org/docs/file-format/>), read with the
//! `parquet` crate of arrow-rs (its column readers, without arrow). Common
//! Crawl's columnar index (schema: `cc-index-schema-flat.json` in
//! commoncrawl/cc-index-table) has the URL in `url`; `--column` picks
//! another (`url_surtkey`, ...). A list column (`list<string>`) gives
//! each element as a value, numbered with its row; `--column` names it
//! (`urls`) or its leaf (`urls.list.element`).
//!
//! Row groups are decoded on `threads` threads at once, straight into the
//! lines the engine reads (a row's value and a newline: [`RowLines`]), and
//! handed over in file order, cut into chunks without a copy. At most
//! `threads + 1` row groups are decoded ahead of the one handed over, and
//! a group's lines stay in memory until the engine has written its
//! chunks, so memory is bounded by the row groups, not by the file; the
//! mapped pages of the row groups handed over are released as the
//! engine's line inputs release theirs. A row's number is its 1-based
//! index in the file; its byte offset, that of its row group's column
//! chunk.

use std::sync::Arc;

use parquet::basic::Type as PhysicalType;
use parquet::column::reader::ColumnReader;
use parquet::data_type::ByteArray;
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::super::chunk::{Chunk, ChunkData, RecordFault, RecordIndex};
use super::super::ordered::OrderedPool;
use super::{breaks_line, push_as_one_line, Extract, Item, RecordPos};
use crate::engine::error::Error;
use crate::engine::input::{take_spare, Home, SharedBytes, Spare};
use crate::engine::Problem;

/// Values read from a column reader at a time.
const BATCH: usize = 8192;

/// One row group's values as the lines the engine reads: each row's
/// value and a `\n`. A null or an empty value is an empty line, and a
/// value with a line break has its breaks as spaces; those rows are
/// invalid, and listed in `faults`.
pub struct RowLines {
    /// 1-based number of the group's first row.
    first_row: u64,
    /// Offset of the group's column chunk in the file.
    byte: u64,
    /// The lines, in a buffer that goes back to the decoders once no
    /// chunk holds it.
    text: SharedBytes,
    /// The invalid rows, by line in the group, in order.
    faults: Vec<RecordFault>,
    /// A list column's: the row of each line, from the group's first
    /// (empty: one line a row).
    rows: Vec<u32>,
}

impl core::fmt::Debug for RowLines {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RowLines")
            .field("first_row", &self.first_row)
            .field("byte", &self.byte)
            .field("faults", &self.faults.len())
            .finish_non_exhaustive()
    }
}

impl RowLines {
    /// Cuts the lines into chunks of input `input`, in order.
    pub fn chunks(&self, input: usize) -> RowChunks<'_> {
        RowChunks {
            rows: self,
            input,
            at: 0,
            line: 0,
            fault: 0,
        }
    }

    /// Where line `line` of the group comes from.
    fn pos(&self, line: usize) -> RecordPos {
        let row = self.rows.get(line).map_or(line as u64, |&r| u64::from(r));
        RecordPos {
            record: self.first_row + row,
            byte: self.byte,
        }
    }

    /// Hands every row to `each` as an item; false when it asked to stop.
    fn items(&self, each: &mut dyn FnMut(Item<'_>) -> bool) -> bool {
        let text = self.text.as_slice();
        let mut faults = self.faults.iter().peekable();
        let mut start = 0;
        for (line, end) in memchr::memchr_iter(b'\n', text).enumerate() {
            let pos = self.pos(line);
            let value = &text[start..end];
            start = end + 1;
            let item = match faults.next_if(|f| f.ordinal as usize == line) {
                Some(f) => Item::Fault {
                    text: value,
                    pos,
                    problem: f.problem,
                    index: f.index as usize,
                },
                None => Item::Url { text: value, pos },
            };
            if !each(item) {
                return false;
            }
        }
        true
    }
}

/// The chunks of a row group's lines, cut at line ends.
#[derive(Debug)]
pub struct RowChunks<'a> {
    rows: &'a RowLines,
    input: usize,
    /// Where the next chunk starts in the text, and its first line.
    at: usize,
    line: u64,
    /// The first fault not in a chunk yet.
    fault: usize,
}

impl RowChunks<'_> {
    /// The next chunk, of about `size` bytes (whole lines, at least one),
    /// at `offset` in the stream of lines the input wrote; `None` at the
    /// group's end.
    pub fn next(&mut self, size: usize, offset: u64) -> Option<Chunk> {
        let text = self.rows.text.as_slice();
        if self.at >= text.len() {
            return None;
        }
        let want = self.at + size.max(1) - 1;
        let end = match text
            .get(want..)
            .and_then(|rest| memchr::memchr(b'\n', rest))
        {
            Some(i) => want + i + 1,
            None => text.len(),
        };
        let lines = memchr::memchr_iter(b'\n', &text[self.at..end]).count() as u64;
        let in_chunk = self.rows.faults[self.fault..]
            .iter()
            .take_while(|f| u64::from(f.ordinal) < self.line + lines)
            .count();
        let faults = self.rows.faults[self.fault..self.fault + in_chunk]
            .iter()
            .map(|f| RecordFault {
                // Under 2^32 lines a group: checked as it is decoded.
                ordinal: (u64::from(f.ordinal) - self.line) as u32,
                ..*f
            })
            .collect();
        let records = if self.rows.rows.is_empty() {
            RecordIndex {
                first: Some(self.rows.pos(self.line as usize)),
                faults,
                ..RecordIndex::default()
            }
        } else {
            let first = self.line as usize;
            RecordIndex {
                pos: (first..first + lines as usize)
                    .map(|l| self.rows.pos(l))
                    .collect(),
                faults,
                ..RecordIndex::default()
            }
        };
        let chunk = Chunk {
            input: self.input,
            offset,
            truncated_tail: false,
            extract: Extract::Line,
            records: Some(Box::new(records)),
            data: ChunkData::Block(self.rows.text.clone(), self.at..end),
        };
        self.at = end;
        self.line += lines;
        self.fault += in_chunk;
        Some(chunk)
    }
}

/// Calls `each` for the value of column `column` of every row of the
/// Parquet file `bytes` (named `name`), in order; `each` returns false to
/// stop. A null is an invalid row (`missing-field`), an empty string one
/// (`empty-field`), a value with a line break one (`line-break`). In a
/// list column, each element is a value, with its row's number; an empty
/// or null list gives none.
///
/// # Errors
/// As [`for_each_group`].
pub fn for_each_value(
    name: &str,
    bytes: SharedBytes,
    column: &str,
    threads: usize,
    each: &mut dyn FnMut(Item<'_>) -> bool,
) -> Result<(), Error> {
    for_each_group(name, bytes, column, threads, &mut |rows| rows.items(each))
}

/// Calls `each` for the rows of every row group of the Parquet file
/// `bytes` (named `name`), column `column`, as lines ([`RowLines`]), in
/// order; `each` returns false to stop. Groups are decoded on `threads`
/// threads at once, at most `threads + 1` ahead of the one handed over.
///
/// # Errors
/// [`Error::Format`] when the file does not parse, has no such column, the
/// column holds no strings, or a row group cannot be decoded.
pub fn for_each_group(
    name: &str,
    bytes: SharedBytes,
    column: &str,
    threads: usize,
    each: &mut dyn FnMut(RowLines) -> bool,
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
    let reader = unpanicked(|| SerializedFileReader::new(data).map_err(|e| e.to_string()))
        .map_err(|message| fault(0, 0, message))?;
    let meta = reader.metadata();
    let schema = meta.file_metadata().schema_descr();
    let columns = schema.columns();
    let Some(index) = column_index(columns, column) else {
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
    let max_def = columns[index].max_def_level();
    let decoder = Arc::new(GroupDecoder {
        name: name.to_owned(),
        index,
        max_def,
        max_rep: columns[index].max_rep_level(),
        // In a list, an element is there from this definition level on (a
        // null one below `max_def` when elements are optional); below it,
        // the row's list is empty or null and gives no line.
        element_def: max_def - i16::from(columns[index].self_type().is_optional()),
        reader,
        first_rows,
        spare: Spare::default(),
    });
    let threads = threads.clamp(1, groups.max(1));
    let window = threads + 1;
    let mut pool = OrderedPool::start("urikey-parquet", threads, {
        let decoder = Arc::clone(&decoder);
        move |g| decoder.decode(g)
    });
    // Row groups handed to the pool so far (0..submitted).
    let mut submitted = 0;
    for g in 0..groups {
        while submitted < groups && pool.in_flight() < window {
            if pool.submit(submitted).is_err() {
                break;
            }
            submitted += 1;
        }
        let group = if g < submitted {
            pool.next()
                .ok_or_else(|| decoder.fault(0, 0, format!("row group {g} was not read")))?
        } else {
            // No decoder thread could start, or none is left: decode here.
            submitted = g + 1;
            decoder.decode(g)
        };
        if !each(group?) {
            return Ok(());
        }
        // The file's pages up to this row group's column chunk leave the
        // resident set (row groups are in file order).
        let (start, len) = decoder
            .reader
            .metadata()
            .row_group(g)
            .column(index)
            .byte_range();
        let end = usize::try_from(start.saturating_add(len)).unwrap_or(usize::MAX);
        map.release(usize::try_from(start).unwrap_or(0)..end);
    }
    Ok(())
}

/// `f`'s answer, or the message of its panic: the `parquet` crate (60.1)
/// panics on some damaged files where it should return an error (found
/// by the `parquet_reader` fuzz target: a dictionary page that claims more
/// values than it holds, read past its end in `util/bit_util.rs`), and a
/// damaged file is an error, never a crash. The panic is not printed: the
/// error says it (see [`quiet_panics`]).
fn unpanicked<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    quiet_panics();
    QUIET.with(|q| q.set(q.get() + 1));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(q.get() - 1));
    result.unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_owned());
        Err(format!("the Parquet reader failed on damaged data ({why})"))
    })
}

thread_local! {
    /// Above 0 while this thread runs the `parquet` crate under
    /// [`unpanicked`], whose panics become errors.
    static QUIET: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Puts a panic hook before the one in place (once per process) that says
/// nothing of a panic [`unpanicked`] turns into an error, and hands every
/// other panic to the hook that was there.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.with(std::cell::Cell::get) == 0 {
                before(info);
            }
        }));
    });
}

/// What decodes a row group of the column, shared by the decoder threads.
struct GroupDecoder {
    name: String,
    reader: SerializedFileReader<bytes::Bytes>,
    /// The column's index among the leaf columns.
    index: usize,
    max_def: i16,
    /// Above 0 for a list column, whose elements are the values.
    max_rep: i16,
    /// The definition level from which a list element is there.
    element_def: i16,
    /// 1-based number of each group's first row.
    first_rows: Vec<u64>,
    /// The groups' line buffers, back once their chunks are written.
    spare: Spare,
}

impl GroupDecoder {
    fn fault(&self, record: u64, byte: u64, message: String) -> Error {
        Error::Format {
            path: self.name.clone(),
            format: "parquet",
            record,
            byte,
            message,
        }
    }

    /// The lines of row group `g`.
    fn decode(&self, g: usize) -> Result<RowLines, Error> {
        let first_row = self.first_rows[g];
        let byte = self
            .reader
            .metadata()
            .row_group(g)
            .column(self.index)
            .byte_range()
            .0;
        unpanicked(|| Ok(self.decode_group(g)))
            .map_err(|message| self.fault(first_row, byte, format!("row group {g}: {message}")))?
    }

    fn decode_group(&self, g: usize) -> Result<RowLines, Error> {
        let first_row = self.first_rows[g];
        let meta = self.reader.metadata();
        let byte = meta.row_group(g).column(self.index).byte_range().0;
        let fail = |e: parquet::errors::ParquetError| {
            self.fault(first_row, byte, format!("row group {g}: {e}"))
        };
        let rg = self.reader.get_row_group(g).map_err(fail)?;
        let ColumnReader::ByteArrayColumnReader(mut col) =
            rg.get_column_reader(self.index).map_err(fail)?
        else {
            return Err(self.fault(first_row, byte, "not a string column".into()));
        };
        let (max_def, max_rep, element_def) = (self.max_def, self.max_rep, self.element_def);
        let mut text = take_spare(&self.spare);
        text.clear();
        let mut faults = Vec::new();
        let mut rows = Vec::new();
        // The row of the list element being read, from the group's first.
        let mut row = u32::MAX;
        let mut line = 0u32;
        let mut values: Vec<ByteArray> = Vec::with_capacity(BATCH);
        let mut defs: Vec<i16> = Vec::with_capacity(BATCH);
        let mut reps: Vec<i16> = Vec::new();
        loop {
            values.clear();
            defs.clear();
            reps.clear();
            let (records, _, levels) = col
                .read_records(
                    BATCH,
                    (max_def > 0).then_some(&mut defs),
                    (max_rep > 0).then_some(&mut reps),
                    &mut values,
                )
                .map_err(fail)?;
            if records == 0 {
                break;
            }
            let mut v = values.iter();
            let entries = if max_rep > 0 { levels } else { records };
            for r in 0..entries {
                let def = defs.get(r).copied().unwrap_or(0);
                if max_rep > 0 {
                    if reps.get(r) == Some(&0) {
                        row = row.wrapping_add(1);
                    }
                    if def < element_def {
                        continue;
                    }
                    rows.push(row);
                }
                let present = max_def == 0 || def == max_def;
                let value = if present {
                    v.next().map_or(&[][..], ByteArray::data)
                } else {
                    &[][..]
                };
                let bad = if !present {
                    Some((Problem::MissingField, 0))
                } else if value.is_empty() {
                    Some((Problem::EmptyField, 0))
                } else {
                    breaks_line(value).map(|at| (Problem::LineBreak, at))
                };
                match bad {
                    None => text.extend_from_slice(value),
                    Some((problem, index)) => {
                        faults.push(RecordFault {
                            ordinal: line,
                            problem,
                            index: index as u32,
                        });
                        push_as_one_line(&mut text, value);
                    }
                }
                text.push(b'\n');
                // A fault's line is a u32, as in every chunk.
                line = line.checked_add(1).ok_or_else(|| {
                    self.fault(first_row, byte, format!("row group {g}: over 2^32 rows"))
                })?;
            }
        }
        // The buffer comes back once the group's chunks are written. One
        // is made only when none is spare, so the spare ones are never more
        // than the groups that were in memory at once.
        let home = Some(Home {
            pool: Arc::downgrade(&self.spare),
            max: usize::MAX,
        });
        Ok(RowLines {
            first_row,
            byte,
            text: SharedBytes::from_vec_home(text, home),
            faults,
            rows,
        })
    }
}

/// The leaf column named `column`: by its whole path
/// (`url.list.element`), or the one leaf under a group of that name (a
/// list column `url`, as pyarrow, DuckDB, Polars and Spark name its leaf
/// `url.list.element`, fastparquet and old writers `url.bag.array_element`
/// or `url.array`).
fn column_index(columns: &[parquet::schema::types::ColumnDescPtr], column: &str) -> Option<usize> {
    if let Some(i) = columns.iter().position(|c| c.path().string() == column) {
        return Some(i);
    }
    let mut under = columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.path().parts().first().is_some_and(|p| p == column));
    match (under.next(), under.next()) {
        (Some((i, _)), None) => Some(i),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use parquet::data_type::ByteArrayType;
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::parser::parse_message_type;

    use super::*;

    /// A Parquet file of one optional string column `url`, one row group
    /// per element of `groups` (`None`: a null).
    fn file(groups: &[&[Option<&str>]]) -> SharedBytes {
        let schema = parse_message_type("message m { OPTIONAL BYTE_ARRAY url (UTF8); }").unwrap();
        let props = Arc::new(WriterProperties::builder().build());
        let mut w = SerializedFileWriter::new(Vec::new(), Arc::new(schema), props).unwrap();
        for rows in groups {
            let values: Vec<ByteArray> =
                rows.iter().flatten().map(|v| ByteArray::from(*v)).collect();
            let defs: Vec<i16> = rows.iter().map(|r| i16::from(r.is_some())).collect();
            let mut group = w.next_row_group().unwrap();
            let mut column = group.next_column().unwrap().unwrap();
            column
                .typed::<ByteArrayType>()
                .write_batch(&values, Some(&defs), None)
                .unwrap();
            column.close().unwrap();
            group.close().unwrap();
        }
        SharedBytes::from_vec(w.into_inner().unwrap())
    }

    const GROUPS: [&[Option<&str>]; 2] = [
        &[Some("http://a/"), None, Some(""), Some("http://b/\nx\ry")],
        &[Some("http://c/"), Some("http://d/"), None],
    ];

    /// The invalid rows of [`GROUPS`], by row number.
    const INVALID: [(u64, Problem); 4] = [
        (2, Problem::MissingField),
        (3, Problem::EmptyField),
        (4, Problem::LineBreak),
        (7, Problem::MissingField),
    ];

    #[test]
    fn parquet_rows_are_lines_and_faults_with_their_row_numbers() {
        let mut got = Vec::new();
        for_each_value("f", file(&GROUPS), "url", 2, &mut |item| {
            got.push(match item {
                Item::Url { text, pos } => (String::from_utf8_lossy(text).into_owned(), pos, None),
                Item::Fault {
                    text,
                    pos,
                    problem,
                    index,
                } => (
                    String::from_utf8_lossy(text).into_owned(),
                    pos,
                    Some((problem, index)),
                ),
            });
            true
        })
        .unwrap();
        let rows: Vec<u64> = got.iter().map(|(_, pos, _)| pos.record).collect();
        assert_eq!(rows, [1, 2, 3, 4, 5, 6, 7]);
        // A row's byte is its row group's column chunk.
        assert_eq!(got[0].1.byte, got[3].1.byte);
        assert!(got[4].1.byte > got[3].1.byte);
        let shapes: Vec<(&str, Option<(Problem, usize)>)> =
            got.iter().map(|(t, _, f)| (t.as_str(), *f)).collect();
        assert_eq!(
            shapes,
            [
                ("http://a/", None),
                ("", Some((Problem::MissingField, 0))),
                ("", Some((Problem::EmptyField, 0))),
                ("http://b/ x y", Some((Problem::LineBreak, 9))),
                ("http://c/", None),
                ("http://d/", None),
                ("", Some((Problem::MissingField, 0))),
            ]
        );
    }

    #[test]
    fn parquet_row_chunks_cut_whole_lines_and_number_them() {
        for size in [1, 5, 12, 1000] {
            let mut text = Vec::new();
            let mut records = Vec::new();
            let mut faults = Vec::new();
            for_each_group("f", file(&GROUPS), "url", 1, &mut |rows| {
                let mut chunks = rows.chunks(7);
                while let Some(chunk) = chunks.next(size, text.len() as u64) {
                    assert_eq!((chunk.input, chunk.offset), (7, text.len() as u64));
                    let bytes = chunk.bytes();
                    assert!(bytes.ends_with(b"\n"), "whole lines");
                    let index = chunk.records.as_deref().unwrap();
                    for (i, _) in bytes.iter().filter(|&&b| b == b'\n').enumerate() {
                        records.push(index.pos(i).record);
                    }
                    faults.extend(
                        index
                            .faults
                            .iter()
                            .map(|f| (index.pos(f.ordinal as usize).record, f.problem)),
                    );
                    text.extend_from_slice(bytes);
                }
                true
            })
            .unwrap();
            assert_eq!(
                text,
                b"http://a/\n\n\nhttp://b/ x y\nhttp://c/\nhttp://d/\n\n"
            );
            assert_eq!(records, [1, 2, 3, 4, 5, 6, 7], "size {size}");
            assert_eq!(faults, INVALID, "size {size}");
        }
    }

    /// A whole run reports the invalid rows by row number and keeps the
    /// rest, with chunks of one line and of many.
    #[test]
    fn parquet_dedup_reports_invalid_rows_by_number() {
        for chunk_size in [1, 1 << 20] {
            let mut config = crate::engine::Config::new(crate::uri::key::Keyer::default());
            config.format.format = Some(crate::engine::formats::Format::Parquet);
            config.chunk_size = chunk_size;
            let input = crate::engine::Input::Bytes {
                name: "f".into(),
                bytes: Arc::from(file(&GROUPS).as_slice()),
            };
            let mut out = Vec::new();
            let mut invalid = Vec::new();
            crate::engine::run(
                &config,
                vec![input],
                &mut out,
                &mut |line: &crate::engine::InvalidLine<'_>| {
                    invalid.push((line.line, line.problem));
                },
            )
            .unwrap();
            assert_eq!(out, b"http://a/\nhttp://c/\nhttp://d/\n");
            assert_eq!(invalid, INVALID);
        }
    }
}
