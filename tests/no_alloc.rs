//! Parsing does not allocate: a parsed reference is offsets into the input.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use urikey::uri::UriRef;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Set while the allocations of this thread are counted: the test
    /// harness's own threads allocate at times of their own (a count of 2
    /// came from them once in CI).
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // A constant-initialised `Cell` needs no allocation to read.
        if COUNTED.try_with(Cell::get).unwrap_or(false) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn parse_does_not_allocate() {
    let inputs = [
        "http://user@example.com:8080/a/b/../c?x=1&y=%41#frag",
        "https://[2001:db8::1]/",
        "urn:isbn:0451450523",
        "http://a b/",
        "../../g?y#s",
    ];
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let mut valid = 0;
    COUNTED.set(true);
    for _ in 0..100 {
        for s in inputs {
            valid += usize::from(UriRef::parse_bytes(s.as_bytes()).is_ok());
        }
    }
    COUNTED.set(false);
    assert_eq!(ALLOCATIONS.load(Ordering::Relaxed) - before, 0);
    assert_eq!(valid, 400);
}
