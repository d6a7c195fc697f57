//! Crawl files as other tools write them (`tests/data/interop/`, written by
//! `scripts/gen-interop-fixtures` with pyarrow, DuckDB, Polars,
//! fastparquet and warcio): every one reads as the URLs it was made from,
//! and what detection cannot tell apart is an error that names
//! `--format`, never a run that reads nothing and exits 0.

use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

use crate::common::{gzip_members, stdout_of, urikey, write};

fn interop(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/interop")
        .join(name)
}

/// The keys `normalize` gives for the URL list `name`.
fn keys_of_list(name: &str) -> String {
    stdout_of(
        urikey()
            .args(["normalize", "-q", "--format", "lines"])
            .arg(interop(name)),
    )
}

#[test]
fn interop_parquet_of_every_writer_and_codec() {
    let want = keys_of_list("urls.txt");
    assert_eq!(want.lines().count(), 40);
    let codecs = std::fs::read_to_string(interop("codecs.txt")).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for line in codecs.lines() {
        let (name, codec) = line.split_once(": ").unwrap();
        if name.contains("-list") {
            continue;
        }
        seen.insert(codec.to_owned());
        for format in [&[][..], &["--format", "parquet"][..]] {
            let got = stdout_of(
                urikey()
                    .args(["normalize", "-q"])
                    .args(format)
                    .arg(interop(name)),
            );
            assert_eq!(got, want, "{name} ({codec})");
        }
        let deduped = stdout_of(urikey().args(["dedup", "-q"]).arg(interop(name)));
        assert_eq!(deduped, want, "{name} ({codec})");
    }
    // Both LZ4 codecs and brotli are among them.
    for codec in ["LZ4", "LZ4_RAW", "BROTLI"] {
        assert!(seen.contains(codec), "{codec}: {seen:?}");
    }
}

/// Lines of 30 members, and the file of them as gzip members followed by
/// `padding` zero bytes.
fn padded_members(padding: usize) -> (Vec<u8>, Vec<u8>) {
    let parts: Vec<Vec<u8>> = (0..30)
        .map(|m| {
            (0..1500)
                .map(|i| format!("http://p{}.example/{m}/{i}\n", i % 40))
                .collect::<String>()
                .into_bytes()
        })
        .collect();
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    let mut file = gzip_members(&refs);
    file.resize(file.len() + padding, 0);
    (parts.concat(), file)
}

#[test]
fn interop_gzip_zero_padding_reads_as_zcat_reads_it() {
    let dir = TempDir::new().unwrap();
    // A tape block of padding, and one byte of it.
    for padding in [10_240, 1] {
        let (plain, file) = padded_members(padding);
        let gz = write(&dir, "padded.gz", &file);
        if let Ok(out) = Command::new("zcat").arg(&gz).output() {
            assert!(out.status.success());
            assert_eq!(out.stdout, plain, "zcat reads every line");
        }
        let plain = write(&dir, "plain.txt", &plain);
        let want = stdout_of(urikey().args(["dedup", "--emit", "original"]).arg(&plain));
        // Mapped members.
        let got = stdout_of(urikey().args(["dedup", "--emit", "original"]).arg(&gz));
        assert_eq!(got, want, "mapped, padding {padding}");
        // Piped members, and one flate2 stream.
        for threads in ["2", "1"] {
            let got = stdout_of(
                urikey()
                    .args(["dedup", "--emit", "original", "--threads", threads, "-"])
                    .write_stdin(file.clone()),
            );
            assert_eq!(got, want, "piped, --threads {threads}, padding {padding}");
        }
        // normalize reads a stream on its own.
        let keys = stdout_of(urikey().args(["normalize", "-q"]).arg(&gz));
        assert_eq!(keys.lines().count(), 30 * 1500);
    }
}

#[test]
fn interop_warc_with_a_json_metadata_record_first() {
    let want = keys_of_list("warcio-metadata-first.urls.txt");
    let file = interop("warcio-metadata-first.warc.gz");
    for format in [&[][..], &["--format", "warc"][..]] {
        let got = stdout_of(urikey().args(["dedup", "-q"]).args(format).arg(&file));
        assert_eq!(got, want);
    }
}

#[test]
fn interop_wat_with_content_type_parameters() {
    let want = keys_of_list("warcio-charset.links.txt");
    let file = interop("warcio-charset.wat.gz");
    for format in [&[][..], &["--format", "wat"][..]] {
        let got = stdout_of(urikey().args(["normalize", "-q"]).args(format).arg(&file));
        assert_eq!(got, want);
    }
}

#[test]
fn interop_openwayback_cdxj_header_lines_are_skipped() {
    let want = keys_of_list("openwayback.urls.txt");
    let file = interop("openwayback.cdxj");
    for format in [&[][..], &["--format", "cdxj"][..]] {
        for command in ["normalize", "dedup"] {
            let out = urikey()
                .args([command, "--lenient"])
                .args(format)
                .arg(&file)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{stderr}");
            assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{command}");
            assert!(!stderr.contains("invalid"), "{command}: {stderr}");
        }
    }
}

#[test]
fn interop_detection_that_is_not_sure_names_format() {
    let dir = TempDir::new().unwrap();
    // OpenWayback's header, then no index line.
    let owb = write(
        &dir,
        "owb.cdxj",
        b"!OpenWayback-CDXJ 1.0\nhttp://a.example/\n",
    );
    // A WARC whose first 64 KiB are a warcinfo and a metadata record that
    // is not WAT JSON: no capture seen yet.
    let body = vec![b'x'; 70_000];
    let mut warc = b"WARC/1.0\r\nWARC-Type: warcinfo\r\nContent-Length: 0\r\n\r\n\r\n\r\n".to_vec();
    warc.extend_from_slice(
        format!(
            "WARC/1.0\r\nWARC-Type: metadata\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    warc.extend_from_slice(&body);
    warc.extend_from_slice(b"\r\n\r\n");
    let warc = write(&dir, "big-meta.warc", &warc);
    for (file, options) in [
        (&owb, "--format cdxj or --format lines"),
        (&warc, "--format warc or --format wat"),
    ] {
        for command in ["dedup", "normalize"] {
            let out = urikey().args([command, "-q"]).arg(file).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{command} {file:?}: {stderr}");
            assert!(stderr.contains("cannot tell the format of"), "{stderr}");
            assert!(stderr.contains(options), "{stderr}");
        }
    }
}

#[test]
fn interop_parquet_list_column_reads_each_element() {
    let want = keys_of_list("list-urls.txt");
    for writer in ["pyarrow", "duckdb", "polars"] {
        let file = interop(&format!("{writer}-list.parquet"));
        for column in ["urls", "urls.list.element"] {
            let out = urikey()
                .args(["normalize", "--on-invalid", "skip", "--column", column])
                .arg(&file)
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(stdout, want, "{writer} --column {column}: {stderr}");
            // The null element is an invalid record of its row (the 4th).
            assert!(
                stderr.contains("parquet:4: byte") && stderr.contains("missing field"),
                "{writer}: {stderr}"
            );
        }
        let deduped = stdout_of(
            urikey()
                .args(["dedup", "-q", "--column", "urls"])
                .arg(&file),
        );
        assert_eq!(deduped, want, "{writer}");
    }
}

/// The `(line, byte)` of each invalid line `urikey args... file` reports.
fn reported(args: &[&str], file: &Path) -> Vec<(u64, u64, String)> {
    let out = urikey().args(args).arg(file).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    stderr
        .lines()
        .filter_map(|l| {
            let l = l.strip_prefix("urikey: ").unwrap_or(l);
            let rest = l.strip_prefix(&format!("{}:", file.display()))?;
            let (line, rest) = rest.split_once(": byte ")?;
            let (byte, reason) = rest.split_once(": ")?;
            Some((line.parse().ok()?, byte.parse().ok()?, reason.to_owned()))
        })
        .collect()
}

#[test]
fn interop_cdxj_faults_are_at_their_file_bytes() {
    // cdxj-indexer writes non-ASCII as `\uXXXX`: strict reading rejects
    // the first non-ASCII character, whose escape is at this byte.
    let file = interop("cdxj-indexer-escapes.cdxj");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut want = Vec::new();
    let mut at = 0;
    for (n, line) in text.lines().enumerate() {
        if let Some(i) = line.find("\\u") {
            want.push(((n + 1) as u64, (at + i) as u64));
        }
        at += line.len() + 1;
    }
    assert_eq!(want.len(), 2);
    for command in [
        &["dedup"][..],
        &["normalize"][..],
        &["normalize", "--format", "cdxj"][..],
    ] {
        let got: Vec<(u64, u64)> = reported(command, &file)
            .into_iter()
            .map(|(line, byte, _)| (line, byte))
            .collect();
        assert_eq!(got, want, "{command:?}");
    }
}

#[test]
fn interop_escaped_line_breaks_in_cdxj_are_faults_never_edits() {
    let dir = TempDir::new().unwrap();
    let lines = [
        r#"example,lf)/mid 20240101000000 {"url": "http://lf.example/mid\nx"}"#,
        r#"example,cr)/ 20240101000000 {"url": "http:\/\/cr.example\/\rx"}"#,
        r#"example,tab)/ 20240101000000 {"url": "http://tab.example/\tx", "mime": "text/html"}"#,
        r#"example,ok)/ 20240101000000 {"url": "http://ok.example/"}"#,
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let file = write(&dir, "breaks.cdxj", text.as_bytes());
    let mut want = Vec::new();
    let mut at = 0;
    for (n, line) in lines.iter().enumerate() {
        // The break's escape is each faulty line's last backslash.
        if n < 3 {
            let i = line.rfind('\\').unwrap();
            want.push((
                (n + 1) as u64,
                (at + i) as u64,
                "line break in value".to_owned(),
            ));
        }
        at += line.len() + 1;
    }
    for lenient in [&[][..], &["--lenient"][..]] {
        for command in ["dedup", "normalize"] {
            let mut args = vec![command];
            args.extend_from_slice(lenient);
            assert_eq!(reported(&args, &file), want, "{args:?}");
            let out = urikey().args(&args).arg(&file).output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(!stdout.contains("midx"), "{args:?}: {stdout}");
            assert!(stdout.contains("http://ok.example/"), "{args:?}: {stdout}");
        }
    }
}

#[test]
fn interop_arc_v1_gzip_per_record_and_v2_plain() {
    for (name, list) in [
        ("arc-v1.arc.gz", "arc-v1.urls.txt"),
        ("arc-v2.arc", "arc-v2.urls.txt"),
    ] {
        let want = keys_of_list(list);
        for format in [&[][..], &["--format", "arc"][..]] {
            for command in ["normalize", "dedup"] {
                let got = stdout_of(
                    urikey()
                        .args([command, "-q", "--lenient"])
                        .args(format)
                        .arg(interop(name)),
                );
                assert_eq!(got, want, "{command} {name} {format:?}");
            }
        }
    }
    // A record cut short: exit 2 naming the record, after the URLs before.
    let dir = TempDir::new().unwrap();
    let mut cut = std::fs::read(interop("arc-v2.arc")).unwrap();
    cut.truncate(cut.len() - 10);
    let cut = write(&dir, "cut.arc", &cut);
    let out = urikey().args(["dedup", "-q"]).arg(&cut).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot read") && stderr.contains("as arc: record 4"),
        "{stderr}"
    );
    // The cut record's header line is whole: its URL is read, as a WARC
    // record's target is.
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 3);
}
