//! The engine's rooms import each other one way only, along the data's
//! way: a room may use the rooms listed before it in [`ORDER`], never one
//! after it, so no two rooms import each other, directly or round about.
//!
//! A room is a folder of `src/engine/` or one of its loose files. The
//! engine's front (`mod.rs`: `Field`, `Problem` and the re-exports;
//! `config.rs`: `Config` and its builder; `error.rs`: the one `Error`
//! every room returns) is the
//! shared vocabulary every room may use; it is not a room. Test modules
//! (`#[cfg(test)] mod tests`) are left out: a test may drive a whole run.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The rooms, from the bottom up.
const ORDER: &[&str] = &[
    // Small tools every room may use.
    "prefetch",
    "memory",
    "share",
    "rss",
    "observe",
    "stats",
    "line_keys",
    // The seen-store on disk knows nothing of runs.
    "store",
    // Bytes in: sources, decompression, chunks of lines, formats.
    "input",
    // The seen-sets in memory.
    "seen",
    // Keys known before a run (the store's seam).
    "prior",
    // A store fed batch by batch, answering for keys not yet committed
    // (the Python `SeenStore`).
    "batched_store",
    // The seen-set in Redis: a prior set too, reusing the store's
    // configuration check.
    "redis",
    // Runs larger than memory.
    "spill",
    // The key and insert phases.
    "batch",
    // Bytes out.
    "output",
    // The run that drives them all.
    "pipeline",
];

/// The front: shared by every room, not a room.
const FRONT: &[&str] = &["mod", "config", "error"];

fn engine_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine")
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file below `src/engine/` (`input/gzip.rs`:
/// `["input", "gzip"]`; `input/mod.rs`: `["input"]`).
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(engine_dir()).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The code of a file without its comments and its test module.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The first segments of every path in `code` that starts with `super::`
/// or `crate::engine::`, resolved from module `module`: the engine-level
/// names they reach (a brace group gives each of its names).
fn engine_names(code: &str, module: &[String]) -> BTreeSet<String> {
    let bytes = code.as_bytes();
    let mut names = BTreeSet::new();
    let mut i = 0;
    while i < bytes.len() {
        let at_word = i == 0 || !is_ident(bytes[i - 1]);
        let rest = &code[i..];
        let (depth, after) = if at_word && rest.starts_with("crate::engine::") {
            (None, i + "crate::engine::".len())
        } else if at_word && rest.starts_with("super::") {
            let mut j = i;
            let mut n = 0;
            while code[j..].starts_with("super::") {
                j += "super::".len();
                n += 1;
            }
            (Some(n), j)
        } else {
            i += 1;
            continue;
        };
        // The module the path's prefix names, from the engine down.
        let base: Vec<String> = match depth {
            None => Vec::new(),
            Some(n) if n <= module.len() => module[..module.len() - n].to_vec(),
            Some(_) => {
                i = after;
                continue;
            }
        };
        let mut j = after;
        if let Some(first) = base.first() {
            names.insert(first.clone());
        } else if code[j..].starts_with('{') {
            let end = code[j..].find('}').map_or(code.len(), |e| j + e);
            for item in code[j + 1..end].split(',') {
                let name: String = item
                    .trim()
                    .bytes()
                    .take_while(|&b| is_ident(b))
                    .map(char::from)
                    .collect();
                if !name.is_empty() {
                    names.insert(name);
                }
            }
            j = end;
        } else {
            let start = j;
            while j < bytes.len() && is_ident(bytes[j]) {
                j += 1;
            }
            if start < j {
                names.insert(code[start..j].to_owned());
            }
        }
        i = j.max(i + 1);
    }
    names
}

#[test]
fn engine_rooms_import_only_the_rooms_before_them() {
    let mut files = Vec::new();
    sources(&engine_dir(), &mut files);
    files.sort();
    let rank = |room: &str| ORDER.iter().position(|r| *r == room);
    let mut rooms_seen = BTreeSet::new();
    let mut wrong = Vec::new();
    for file in &files {
        let module = module_of(file);
        let room = module.first().map_or("mod", String::as_str).to_owned();
        rooms_seen.insert(room.clone());
        if FRONT.contains(&room.as_str()) {
            continue;
        }
        let Some(own) = rank(&room) else {
            wrong.push(format!("{}: room `{room}` is not in ORDER", file.display()));
            continue;
        };
        let code = code_of(&fs::read_to_string(file).unwrap());
        for name in engine_names(&code, &module) {
            if let Some(other) = rank(&name) {
                if other > own {
                    wrong.push(format!(
                        "{}: `{room}` uses `{name}`, which comes after it",
                        file.display()
                    ));
                }
            }
        }
    }
    for room in ORDER {
        assert!(
            rooms_seen.contains(*room),
            "ORDER names `{room}`, which is no room of src/engine/"
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_room_check_resolves_paths() {
    // A file of `input/formats/`: `super` is `input::formats`.
    let module = vec!["input".to_owned(), "formats".to_owned(), "warc".to_owned()];
    let names = engine_names(
        "use super::super::super::error::Error;\nuse super::cdx;\n\
         use crate::engine::{seen, Field};\nlet x = crate::engine::run();",
        &module,
    );
    let want: BTreeSet<String> = ["error", "input", "seen", "Field", "run"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    assert_eq!(names, want);
}
