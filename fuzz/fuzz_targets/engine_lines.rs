//! Fuzz target `engine_lines`: the dedup engine's line handling against a
//! naive line-by-line reference: chunk boundaries (chunks of 1 to 64
//! bytes), CR before LF, a BOM, the line limit, `--field` columns (split at
//! a delimiter, or RFC 4180 quoting with `--csv`), lenient mapping (a
//! whitespace line is blank), relative references (allowed, rejected or
//! resolved), every selection and both emit modes. The reference keys with
//! the same `Keyer`: this target checks the lines, not the keys.
//!
//! Input layout: three configuration bytes, then the input.
//! byte 0: bits 0-1 selection, 2 emit original, 3 lenient, 4 stream input,
//! 5 exact, 6-7 relative references (allow, reject, resolve);
//! byte 1: bits 0-1 field (none, TAB, `,`, `,` with CSV), 2-3 column,
//! 4 two threads, 5 a small line limit, 6-7 key format;
//! byte 2: chunk size - 1 (mod 64).

#![no_main]

use std::collections::HashMap;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use urikey::engine::{self, Config, Emit, Field, Input, InvalidLine, Select};
use urikey::uri::key::{KeyErrorKind, KeyFormat, KeyScratch, Keyer, Relative};

fuzz_target!(|data: &[u8]| {
    let Some((&[b0, b1, b2], input)) = data.split_first_chunk::<3>() else {
        return;
    };
    let select = match b0 & 3 {
        1 => Select::Duplicates,
        2 => Select::Counts,
        _ => Select::Unique,
    };
    let emit = if b0 & 4 != 0 {
        Emit::Original
    } else {
        Emit::Key
    };
    let relative = match b0 >> 6 {
        1 => Relative::Reject,
        2 => Relative::resolve_against("http://b.example/d/e?q").expect("absolute"),
        _ => Relative::Allow,
    };
    let format = match b1 >> 6 {
        1 => KeyFormat::Surt,
        2 => KeyFormat::Hash,
        _ => KeyFormat::Uri,
    };
    let keyer = Keyer::default()
        .with_lenient(b0 & 8 != 0)
        .with_relative(relative)
        .with_format(format);
    let field = match b1 & 3 {
        0 => None,
        mode => Some(
            Field::new(usize::from(b1 >> 2 & 3), if mode == 1 { b'\t' } else { b',' })
                .with_csv(mode == 3),
        ),
    };
    let max_line = if b1 & 32 != 0 { 12 } else { 1 << 20 };

    let mut config = Config::new(keyer.clone());
    config.select = select;
    config.emit = emit;
    config.field = field;
    config.exact = b0 & 32 != 0;
    config.threads = if b1 & 16 != 0 { 2 } else { 1 };
    config.chunk_size = usize::from(b2 % 64) + 1;
    config.max_line_bytes = max_line;
    let source = if b0 & 16 != 0 {
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
    let mut reported = 0u64;
    let stats = engine::run(&config, vec![source], &mut got, &mut |_: &InvalidLine<
        '_,
    >| reported += 1)
    .expect("in-memory runs cannot fail");

    let want = reference(&keyer, input, select, emit, field, max_line);
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(&want.out),
        "output differs"
    );
    assert_eq!(
        (stats.blank, stats.invalid, stats.unique, stats.duplicates),
        (want.blank, want.invalid, want.unique, want.duplicates),
        "counts differ (blank, invalid, unique, duplicates)"
    );
    assert_eq!(reported, want.invalid);
    assert_eq!(
        stats.lines,
        stats.blank + stats.invalid + stats.unique + stats.duplicates
    );
});

#[derive(Default)]
struct Want {
    out: Vec<u8>,
    blank: u64,
    invalid: u64,
    unique: u64,
    duplicates: u64,
}

/// One line at a time, as a user would read the rules.
fn reference(
    keyer: &Keyer,
    input: &[u8],
    select: Select,
    emit: Emit,
    field: Option<Field>,
    max_line: usize,
) -> Want {
    let mut want = Want::default();
    let body = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
    let mut lines: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
    if body.ends_with(b"\n") || body.is_empty() {
        lines.pop();
    }
    let mut scratch = KeyScratch::default();
    let mut seen: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut firsts: Vec<(Vec<u8>, u64)> = Vec::new();
    for raw in lines {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.is_empty() {
            want.blank += 1;
            continue;
        }
        if line.len() > max_line {
            want.invalid += 1;
            continue;
        }
        let (url, column) = match field {
            None => (line.to_vec(), None),
            Some(f) => {
                let column = if f.csv {
                    csv_column(line, f.delimiter, f.index)
                } else {
                    plain_column(line, f.delimiter, f.index)
                };
                match column {
                    Some((start, end, text)) => (text, Some((start, end))),
                    None => {
                        want.invalid += 1;
                        continue;
                    }
                }
            }
        };
        if url.is_empty() {
            want.invalid += 1; // an empty column
            continue;
        }
        let key = match keyer.uri_key(&url, &mut scratch) {
            Ok(key) => key.to_vec(),
            Err(e) if e.kind() == KeyErrorKind::Blank && field.is_none() => {
                want.blank += 1;
                continue;
            }
            Err(_) => {
                want.invalid += 1;
                continue;
            }
        };
        let mut shown = Vec::new();
        match (emit, field, column) {
            (Emit::Original, _, _) => shown.extend_from_slice(line),
            (Emit::Key, Some(f), Some((start, end))) => {
                let mut printed = Vec::new();
                keyer.write_key(&key, &mut printed);
                shown.extend_from_slice(&line[..start]);
                let quote = f.csv
                    && (line[start..].first() == Some(&b'"')
                        || printed.iter().any(|&b| b == f.delimiter || b == b'"'));
                if quote {
                    shown.push(b'"');
                    for &b in &printed {
                        if b == b'"' {
                            shown.push(b'"');
                        }
                        shown.push(b);
                    }
                    shown.push(b'"');
                } else {
                    shown.extend_from_slice(&printed);
                }
                shown.extend_from_slice(&line[end..]);
            }
            _ => keyer.write_key(&key, &mut shown),
        }
        match seen.get(&key) {
            Some(&i) => {
                want.duplicates += 1;
                firsts[i].1 += 1;
                if select == Select::Duplicates {
                    want.out.extend_from_slice(&shown);
                    want.out.push(b'\n');
                }
            }
            None => {
                want.unique += 1;
                seen.insert(key, firsts.len());
                if select == Select::Unique {
                    want.out.extend_from_slice(&shown);
                    want.out.push(b'\n');
                }
                firsts.push((shown, 1));
            }
        }
    }
    if select == Select::Counts {
        for (shown, count) in firsts {
            want.out.extend_from_slice(format!("{count}\t").as_bytes());
            want.out.extend_from_slice(&shown);
            want.out.push(b'\n');
        }
    }
    want
}

/// Column `index` split at every `delim`: (start, end, text).
fn plain_column(line: &[u8], delim: u8, index: usize) -> Option<(usize, usize, Vec<u8>)> {
    let mut start = 0;
    for (i, column) in line.split(|&b| b == delim).enumerate() {
        if i == index {
            return Some((start, start + column.len(), column.to_vec()));
        }
        start += column.len() + 1;
    }
    None
}

/// Column `index` read with RFC 4180 quoting: a field that starts with a
/// quote runs to the next lone quote (`""` is a quote), and what follows
/// it up to the delimiter is kept as written.
fn csv_column(line: &[u8], delim: u8, index: usize) -> Option<(usize, usize, Vec<u8>)> {
    let mut i = 0;
    let mut column = 0;
    loop {
        let start = i;
        let mut text = Vec::new();
        if line.get(i) == Some(&b'"') {
            i += 1;
            loop {
                match line.get(i) {
                    None => break,
                    Some(b'"') if line.get(i + 1) == Some(&b'"') => {
                        text.push(b'"');
                        i += 2;
                    }
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(&b) => {
                        text.push(b);
                        i += 1;
                    }
                }
            }
        }
        while let Some(&b) = line.get(i) {
            if b == delim {
                break;
            }
            text.push(b);
            i += 1;
        }
        if column == index {
            return Some((start, i, text));
        }
        if i >= line.len() {
            return None;
        }
        i += 1;
        column += 1;
    }
}
