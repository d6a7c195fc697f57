//! Fuzz target `formats_cdxj`: the CDXJ reader on any line never panics,
//! and a URL it finds is either part of the line, where it says, or the
//! unescaped string `serde_json` itself reads from the line's JSON; the
//! fast path gives what the `serde_json` reader alone gives.

#![no_main]

use libfuzzer_sys::fuzz_target;
use urikey::engine::formats::cdxj;

fuzz_target!(|line: &[u8]| {
    let mut buf = Vec::new();
    let mut slow_buf = Vec::new();
    let slow = cdxj::url_by_serde(line, &mut slow_buf).map(|(at, u)| (at, u.to_vec()));
    let fast = cdxj::url(line, &mut buf).map(|(at, u)| (at, u.to_vec()));
    assert_eq!(fast, slow);
    match cdxj::url(line, &mut buf) {
        Ok((at, url)) => {
            assert!(at <= line.len());
            let url = url.to_vec();
            if line.get(at..at + url.len()) != Some(&url[..]) {
                // Unescaped: the JSON's `url` as serde_json reads it.
                // The JSON follows the second space.
                let json = line.splitn(3, |&b| b == b' ').nth(2).unwrap();
                let v: serde_json::Value = serde_json::from_slice(json).unwrap();
                assert_eq!(v["url"].as_str().unwrap().as_bytes(), &url[..]);
            }
        }
        Err((index, _)) => assert!(index <= line.len()),
    }
});
