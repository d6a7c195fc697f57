//! Any bytes: parsing never panics, errors point inside the input, and a
//! parsed reference recomposes (borrowed and owned) to exactly its input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use urikey::uri::{Components, UriRef};

fuzz_target!(|data: &[u8]| {
    match UriRef::parse_bytes(data) {
        Err(e) => assert!(e.index() <= data.len()),
        Ok(u) => {
            assert_eq!(u.as_str().as_bytes(), data);
            let owned = Components::from(&u);
            let text = owned.to_string();
            assert_eq!(text.as_bytes(), data, "owned model changed the text");
            assert_eq!(Components::parse(&text).as_ref(), Ok(&owned));
        }
    }
});
