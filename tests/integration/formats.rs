//! The crawl formats end to end (`docs/formats.md`): every format of the
//! committed fixtures gives the keys of the URL list they were made from,
//! faults are reported as the docs say, and the real whirlwind WARC/WAT/WET
//! are read in place.

use std::path::{Path, PathBuf};

use predicates::prelude::*;
use tempfile::TempDir;

use crate::common::{gzip_members, stdout_of, urikey, write};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/formats")
        .join(name)
}

#[test]
fn formats_every_fixture_gives_the_keys_of_its_urls() {
    let want = stdout_of(
        urikey()
            .args(["dedup", "-q"])
            .arg(fixture("sample.urls.txt")),
    );
    assert!(want.lines().count() > 200);
    for (name, format) in [
        ("sample.cdxj.gz", "cdxj"),
        ("sample.cdx", "cdx"),
        ("sample.parquet", "parquet"),
    ] {
        // Recognised from the content, and named.
        let detected = stdout_of(urikey().args(["dedup", "-q"]).arg(fixture(name)));
        assert_eq!(detected, want, "{name}");
        let named = stdout_of(
            urikey()
                .args(["dedup", "-q", "--format", format])
                .arg(fixture(name)),
        );
        assert_eq!(named, want, "{name}");
    }
    // normalize: one key per record, as for the URL list.
    let keys = stdout_of(
        urikey()
            .args(["normalize", "-q"])
            .arg(fixture("sample.urls.txt")),
    );
    for name in ["sample.cdxj.gz", "sample.cdx", "sample.parquet"] {
        let got = stdout_of(urikey().args(["normalize", "-q"]).arg(fixture(name)));
        assert_eq!(got, keys, "{name}");
    }
}

#[test]
fn formats_emit_original_prints_the_records() {
    let cdxj = stdout_of(
        urikey()
            .args(["dedup", "-q", "--emit", "original"])
            .arg(fixture("sample.cdxj.gz")),
    );
    let first = cdxj.lines().next().expect("output");
    assert!(first.contains(" {\"url\": "), "{first}");
    let parquet = stdout_of(
        urikey()
            .args(["dedup", "-q", "--emit", "original"])
            .arg(fixture("sample.parquet")),
    );
    let urls = std::fs::read_to_string(fixture("sample.urls.txt")).expect("fixture");
    assert!(parquet.lines().all(|l| urls.lines().any(|u| u == l)));
    let wat = stdout_of(
        urikey()
            .args(["dedup", "-q", "--emit", "original"])
            .arg(fixture("sample.wat.gz")),
    );
    assert!(wat.lines().count() > 100);
    for line in wat.lines() {
        let (page, link) = line.split_once('\t').expect("page<TAB>link");
        assert!(page.starts_with("http"), "{line}");
        assert!(link.contains(':'), "{line}");
    }
    // Another Parquet column.
    let surts = stdout_of(
        urikey()
            .args([
                "dedup",
                "-q",
                "--emit",
                "original",
                "--allow-relative",
                "--column",
            ])
            .arg("url_surtkey")
            .arg(fixture("sample.parquet")),
    );
    assert!(surts.lines().next().is_some_and(|l| l.contains(")/")));
}

#[test]
fn formats_cdxj_faults_are_invalid_lines() {
    let dir = TempDir::new().unwrap();
    let cdxj = b"com,a)/ 20240101000000 {\"url\": \"http:\\/\\/a.example\\/?x=1\\u0026y\"}\n\
com,a)/ 20240101000001 {\"mime\": \"text/html\"}\n\
com,a)/ 20240101000002 {\"url\": \"http://b.example/\"\n\
com,a)/ 20240101000003 {\"url\": \"http://a.example/?x=1&y\"}\n";
    let path = write(&dir, "x.cdxj", cdxj);
    let rejects = dir.path().join("rejects.txt");
    urikey()
        .args(["dedup", "--format", "cdxj", "--rejects"])
        .arg(&rejects)
        .arg(&path)
        .assert()
        .success()
        .stdout("http://a.example/?x=1&y\n")
        .stderr(
            predicate::str::contains("x.cdxj:2: byte ")
                .and(predicate::str::contains("missing field")),
        )
        .stderr(
            predicate::str::contains("x.cdxj:3: byte ")
                .and(predicate::str::contains("JSON does not parse")),
        );
    let rejects = std::fs::read_to_string(rejects).unwrap();
    assert!(
        rejects.contains(":2:") && rejects.contains(":missing-field\t"),
        "{rejects}"
    );
    assert!(
        rejects.contains(":bad-json\tcom,a)/ 20240101000002"),
        "{rejects}"
    );
}

#[test]
fn formats_cdx_header_places_the_url_column() {
    let dir = TempDir::new().unwrap();
    let cdx = b" CDX a b N\nhttp://x.example/ 20240101000000 example,x)/\n";
    let path = write(&dir, "h.cdx", cdx);
    urikey()
        .args(["dedup"])
        .arg(&path)
        .assert()
        .success()
        .stdout("http://x.example/\n");
    let bad = write(&dir, "bad.cdx", b" CDX N b m\nx 1 y\n");
    urikey()
        .args(["dedup", "--format", "cdx"])
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.cdx").and(predicate::str::contains("original-URL")));
}

#[test]
fn formats_truncated_gzip_member_after_the_lines_before_it() {
    let dir = TempDir::new().unwrap();
    let first: Vec<u8> = (0..3000)
        .map(|i| format!("http://a.example/{i}\n"))
        .collect::<String>()
        .into_bytes();
    let second: Vec<u8> = (0..3000)
        .map(|i| format!("http://b.example/{i}\n"))
        .collect::<String>()
        .into_bytes();
    let mut file = gzip_members(&[&first, &second]);
    let member = gzip_members(&[&first]).len();
    file.truncate(file.len() - 20);
    let path = write(&dir, "cut.gz", &file);
    let out = urikey().args(["dedup", "-q"]).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cut.gz"), "{stderr}");
    assert!(
        stderr.contains(&format!("gzip member at byte {member} ")),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.lines().count() >= 3000,
        "the first member's lines come first"
    );
    // With -o, no output file.
    let output = dir.path().join("out.txt");
    urikey()
        .args(["dedup", "-q", "-o"])
        .arg(&output)
        .arg(&path)
        .assert()
        .code(2);
    assert!(!output.exists());
}

#[test]
fn formats_multi_member_gzip_reads_as_the_plain_file() {
    let dir = TempDir::new().unwrap();
    let (parts, file) = members_file();
    let plain = write(&dir, "plain.txt", &parts.concat());
    let gz = write(&dir, "members.gz", &file);
    let want = stdout_of(urikey().args(["dedup", "--emit", "original"]).arg(&plain));
    let got = stdout_of(urikey().args(["dedup", "--emit", "original"]).arg(&gz));
    assert_eq!(got, want);
}

fn warc(kind: &str, target: &str, body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {target}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

#[test]
fn formats_warc_types_and_a_record_past_the_end() {
    let dir = TempDir::new().unwrap();
    let mut data = warc("request", "http://a.example/", b"GET / HTTP/1.1\r\n\r\n");
    data.extend(warc(
        "response",
        "http://a.example/",
        b"HTTP/1.1 200 OK\r\n\r\n",
    ));
    data.extend(warc(
        "response",
        "http://b.example/",
        b"HTTP/1.1 200 OK\r\n\r\n",
    ));
    let path = write(&dir, "a.warc", &data);
    urikey()
        .arg("dedup")
        .arg(&path)
        .assert()
        .success()
        .stdout("http://a.example/\nhttp://b.example/\n");
    let third = data.len();
    data.extend(warc("response", "http://c.example/", b"0123456789"));
    data.truncate(data.len() - 9);
    let cut = write(&dir, "cut.warc.gz", &gzip_members(&[&data]));
    let output = dir.path().join("out.txt");
    urikey()
        .args(["dedup", "-o"])
        .arg(&output)
        .arg(&cut)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("cut.warc.gz")
                .and(predicate::str::contains(format!("record 4 (byte {third})")))
                .and(predicate::str::contains(
                    "Content-Length 10 runs past the end",
                )),
        );
    assert!(!output.exists());
}

#[test]
fn formats_parquet_missing_column_and_corrupt_file() {
    let dir = TempDir::new().unwrap();
    urikey()
        .args(["dedup", "--column", "nope"])
        .arg(fixture("sample.parquet"))
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("sample.parquet")
                .and(predicate::str::contains("no column \"nope\""))
                .and(predicate::str::contains("url_surtkey, url, url_host_name")),
        );
    let mut bytes = std::fs::read(fixture("sample.parquet")).unwrap();
    let n = bytes.len();
    for b in &mut bytes[n / 3..n / 3 + 64] {
        *b ^= 0x5a;
    }
    let corrupt = write(&dir, "corrupt.parquet", &bytes);
    urikey()
        .args(["dedup", "-q"])
        .arg(&corrupt)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("corrupt.parquet"));
    let cut = write(&dir, "cut.parquet", &bytes[..n / 2]);
    urikey()
        .args(["dedup", "-q", "--format", "parquet"])
        .arg(&cut)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cut.parquet"));
}

/// A file on which the `parquet` crate (60.1) panics (found by the
/// `parquet_reader` fuzz target: a dictionary page that claims more values
/// than it holds) is an error naming the file and the row group, on the
/// decoder threads and on the calling thread alike, and no panic is shown.
#[test]
fn formats_parquet_the_reader_panics_on_is_an_error() {
    for threads in ["1", "2"] {
        urikey()
            .args(["dedup", "-q", "--threads", threads])
            .arg(fixture("damaged-panics-reader.parquet"))
            .assert()
            .code(2)
            .stdout("")
            .stderr(
                predicate::str::contains("damaged-panics-reader.parquet")
                    .and(predicate::str::contains("row group 0"))
                    .and(predicate::str::contains("damaged data"))
                    .and(predicate::str::contains("panicked").not()),
            );
    }
}

#[test]
fn formats_field_only_with_lines() {
    urikey()
        .args(["dedup", "--field", "2", "--format", "cdxj"])
        .write_stdin("x\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--field reads plain lines"));
}

/// The real Common Crawl whirlwind files, read in place.
fn whirlwind(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/datasets/commoncrawl-whirlwind")
        .join(name);
    if path.exists() {
        Some(path)
    } else {
        super::common::skip_notice(&format!("{} is absent (../shared)", path.display()));
        None
    }
}

#[test]
fn formats_whirlwind_warc_wat_wet() {
    let Some(warc) = whirlwind("whirlwind.warc.gz") else {
        return;
    };
    let page = "https://an.wikipedia.org/wiki/Escopete\n";
    // Recognised as WARC: the response's target.
    urikey()
        .arg("dedup")
        .arg(&warc)
        .assert()
        .success()
        .stdout(page);
    let all = stdout_of(
        urikey()
            .args(["normalize", "--warc-types", "request,response,metadata"])
            .arg(&warc),
    );
    assert_eq!(all, page.repeat(3));
    // The WAT: recognised, no outlinks in this sample.
    if let Some(wat) = whirlwind("whirlwind.warc.wat.gz") {
        urikey()
            .arg("dedup")
            .arg(&wat)
            .assert()
            .success()
            .stdout("");
    }
    // The WET (conversion records).
    if let Some(wet) = whirlwind("whirlwind.warc.wet.gz") {
        urikey()
            .args(["dedup", "--warc-types", "conversion"])
            .arg(&wet)
            .assert()
            .success()
            .stdout(page);
    }
}

/// The names of the threads of process `pid` that start with `prefix`.
#[cfg(target_os = "linux")]
fn threads_named(pid: u32, prefix: &str) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with(prefix))
        .count()
}

#[cfg(target_os = "linux")]
#[test]
fn formats_gzip_workers_follow_threads() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let dir = TempDir::new().unwrap();
    let parts: Vec<Vec<u8>> = (0..200)
        .map(|m| {
            (0..3000)
                .map(|i| format!("http://h{m}.example/{i}\n"))
                .collect::<String>()
                .into_bytes()
        })
        .collect();
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    let gz = write(&dir, "members.gz", &gzip_members(&refs));
    for threads in [1, 2, 3] {
        // Nobody reads the output: the run stops once the pipe is full,
        // with its gzip workers started and waiting.
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("urikey"))
            .args(["dedup", "-q", "--threads", &threads.to_string()])
            .arg(&gz)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        let started = Instant::now();
        // The most decoders seen at once, over 300 ms from the first: the
        // run may decode the whole (small) file into memory and end them
        // before the pipe is full.
        let mut seen = 0;
        let mut first = None;
        while started.elapsed() < Duration::from_secs(20)
            && first.is_none_or(|t: Instant| t.elapsed() < Duration::from_millis(300))
        {
            let now = threads_named(pid, "urikey-gunzip");
            if now > 0 && first.is_none() {
                first = Some(Instant::now());
            }
            seen = seen.max(now);
            std::thread::sleep(Duration::from_millis(1));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(seen, threads, "--threads {threads}");
    }
}

/// Lines of 60 members of 2,000 lines, and the file of them as gzip members.
fn members_file() -> (Vec<Vec<u8>>, Vec<u8>) {
    let parts: Vec<Vec<u8>> = (0..60)
        .map(|m| {
            (0..2000)
                .map(|i| format!("http://h{}.example/{m}/{}\n", i % 50, i * 7 % 1000))
                .collect::<String>()
                .into_bytes()
        })
        .collect();
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    let file = gzip_members(&refs);
    (parts, file)
}

#[test]
fn formats_gzip_from_a_pipe_reads_as_the_plain_file() {
    let dir = TempDir::new().unwrap();
    let (parts, file) = members_file();
    let plain = write(&dir, "plain.txt", &parts.concat());
    let want = stdout_of(urikey().args(["dedup", "--emit", "original"]).arg(&plain));
    for threads in ["1", "2", "3"] {
        let got = stdout_of(
            urikey()
                .args(["dedup", "--emit", "original", "--threads", threads, "-"])
                .write_stdin(file.clone()),
        );
        assert_eq!(got, want, "--threads {threads}");
    }
    // One member.
    let one = gzip_members(&[&parts.concat()]);
    let got = stdout_of(
        urikey()
            .args(["dedup", "--emit", "original", "--threads", "2", "-"])
            .write_stdin(one),
    );
    assert_eq!(got, want);
}

#[test]
fn formats_gzip_from_a_pipe_truncated_member_names_stdin_and_offset() {
    let (parts, mut file) = members_file();
    let refs: Vec<&[u8]> = parts[..59].iter().map(Vec::as_slice).collect();
    let member = gzip_members(&refs).len();
    file.truncate(file.len() - 20);
    let out = urikey()
        .args(["dedup", "-q", "--emit", "original", "--threads", "2", "-"])
        .write_stdin(file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // stdin is named `-`, as on the command line.
    assert!(stderr.contains("cannot decompress - ("), "{stderr}");
    assert!(
        stderr.contains(&format!("gzip member at byte {member} ")),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let before: std::collections::HashSet<&[u8]> = parts[..59]
        .iter()
        .flat_map(|p| p.split(|&b| b == b'\n').filter(|l| !l.is_empty()))
        .collect();
    assert!(
        stdout.lines().count() >= before.len(),
        "the lines of the members before it come first"
    );
}
