//! Fuzz target `formats_warc`: the WARC reader on any bytes never panics,
//! reads records in order at increasing offsets within the input, and ends
//! (at the end, or with an error) without reading past it.

#![no_main]

use libfuzzer_sys::fuzz_target;
use urikey::engine::formats::warc::WarcUrls;
use urikey::engine::formats::Item;

fuzz_target!(|data: &[u8]| {
    let types = vec!["response".to_owned(), "request".to_owned()];
    let mut r = WarcUrls::new(data, &types);
    let mut last = None;
    loop {
        let mut ok = true;
        let more = r.next_record(&mut |item| {
            let pos = match item {
                Item::Url { text, pos } => {
                    ok &= !text.contains(&b'\n');
                    pos
                }
                Item::Fault { pos, .. } => pos,
            };
            ok &= last.is_none_or(|(rec, byte)| pos.record > rec && pos.byte > byte);
            last = Some((pos.record, pos.byte));
        });
        assert!(ok);
        assert!(r.offset() <= data.len() as u64);
        if !matches!(more, Ok(true)) {
            break;
        }
    }
});
