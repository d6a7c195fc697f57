//! Fuzz target `formats_wat`: the WAT reader on any bytes never panics,
//! and every link line it writes is `page<TAB>link` with no line break, the
//! link absolute (resolved against an absolute base) or passed on as
//! written with a scheme.

#![no_main]

use libfuzzer_sys::fuzz_target;
use urikey::engine::formats::wat::WatLinks;
use urikey::engine::formats::Item;

fuzz_target!(|data: &[u8]| {
    let mut r = WatLinks::new(data);
    loop {
        let more = r.next_record(&mut |item| {
            if let Item::Url { text, .. } = item {
                assert!(!text.contains(&b'\n') && !text.contains(&b'\r'));
                let tabs = text.iter().filter(|&&b| b == b'\t').count();
                assert_eq!(tabs, 1, "{:?}", String::from_utf8_lossy(text));
                let link = &text[text.iter().position(|&b| b == b'\t').unwrap() + 1..];
                assert!(link.contains(&b':'), "{:?}", String::from_utf8_lossy(text));
            }
        });
        if !matches!(more, Ok(true)) {
            break;
        }
    }
});
