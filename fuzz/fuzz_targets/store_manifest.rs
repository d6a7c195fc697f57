//! Fuzz target `store_manifest`: any bytes as a seen-store `MANIFEST` are
//! a manifest or an error, never a panic, and a manifest read back from
//! its own encoding is the same manifest. The input is read as it is, and
//! (to get past the checksum) as a body given its right checksum line,
//! and as a valid manifest's body with the input written over a part of
//! it, so that the fuzzer starts from a manifest the store writes.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use urikey::engine::store::fuzzing::{run_name, Manifest, RunEntry};
use urikey::uri::key::Identity;

/// The body of a manifest as a store writes it (its checksum line cut).
fn sample_body() -> String {
    let m = Manifest {
        key_version: 1,
        identity: Identity::from_text("flags=lowercase-scheme,remove-fragment lenient"),
        config: "crawl +sort-query".into(),
        key_format: "uri".into(),
        commit: 3,
        runs: (0..2)
            .map(|n| RunEntry {
                name: run_name(3, n),
                keys: 1000 + n as u64,
                bytes: 16_250_216,
                header_sum: 0x4f1c_0e3a_5b6d_7e8f,
                content_sum: Some(0x5e6f_7081_92a3_b4c5),
            })
            .collect(),
    };
    let text = m.encode();
    let end = text.trim_end().rfind('\n').unwrap() + 1;
    text[..end].to_owned()
}

/// `body` with the checksum line the writer gives it.
fn sealed(body: &str) -> String {
    let mut text = body.to_owned();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let sum = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
    text.push_str(&format!("checksum {sum:016x}\n"));
    text
}

fn check(text: &str) {
    let path = Path::new("MANIFEST");
    let Ok(m) = Manifest::decode(path, text) else {
        return;
    };
    // What a store does with what it read.
    let _ = (m.keys(), m.bytes());
    let again = Manifest::decode(path, &m.encode()).expect("its own encoding does not decode");
    assert_eq!(again, m);
    assert_eq!(again.encode(), m.encode());
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    check(&text);
    check(&sealed(&text));
    if let Some((&at, with)) = data.split_first() {
        let mut body = sample_body().into_bytes();
        let at = usize::from(at) * body.len() / 256;
        let end = (at + with.len()).min(body.len());
        body[at..end].copy_from_slice(&with[..end - at]);
        if with.len() > end - at {
            body.extend_from_slice(&with[end - at..]);
        }
        check(&sealed(&String::from_utf8_lossy(&body)));
    }
});
