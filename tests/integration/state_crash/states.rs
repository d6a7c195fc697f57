//! Crash states of a trace, as ALICE builds them: after every prefix of
//! the events, what a power loss may have kept.
//!
//! What a sync made durable is kept. Of the rest: the names of one
//! directory are kept in order, any number of its unsynced ones (a prefix),
//! each directory apart from the others; a file's unsynced writes may each
//! be kept or lost, whatever the order they were made in. The states are
//! every prefix with all of it kept, with only what was synced, and, for
//! each directory and each file, every prefix of its unsynced part and
//! (files) every one of its unsynced writes lost alone, beside both of
//! those extremes for everything else. A lost write that a later kept one
//! passes reads as zeros.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::Path;

use super::trace::{Event, Kind, Trace};

/// One crash state: the events kept, of the first `prefix`.
#[derive(Clone, Debug)]
pub struct Crash {
    pub prefix: usize,
    pub kept: Vec<bool>,
    /// What was lost, for messages.
    pub what: String,
}

/// Every crash state of `trace` (see the module docs), each once.
pub fn crash_states(trace: &Trace) -> Vec<Crash> {
    let mut out = Vec::new();
    let mut seen: HashSet<(usize, Vec<bool>)> = HashSet::new();
    for prefix in 0..=trace.events.len() {
        let events = &trace.events[..prefix];
        // The events of each directory and file, and how many of them were
        // synced.
        let mut groups: HashMap<(bool, usize), (Vec<usize>, usize)> = HashMap::new();
        for (i, e) in events.iter().enumerate() {
            if let Some(d) = e.dir_of() {
                groups.entry((true, d)).or_default().0.push(i);
            }
            if let Some(f) = e.file_of() {
                groups.entry((false, f)).or_default().0.push(i);
            }
            let synced = match e {
                Event::SyncDir { dir } => Some((true, *dir)),
                Event::SyncFile { inode } => Some((false, *inode)),
                _ => None,
            };
            if let Some(key) = synced {
                let g = groups.entry(key).or_default();
                g.1 = g.0.len();
            }
        }
        let mut all = vec![false; prefix];
        let mut min = vec![false; prefix];
        for (i, e) in events.iter().enumerate() {
            let counted = e.dir_of().is_some() || e.file_of().is_some();
            all[i] = counted;
        }
        for (members, synced) in groups.values() {
            for &i in &members[..*synced] {
                min[i] = true;
            }
        }
        let mut push = |kept: Vec<bool>, what: String| {
            if seen.insert((prefix, kept.clone())) {
                out.push(Crash { prefix, kept, what });
            }
        };
        push(
            all.clone(),
            format!("after event {prefix}, everything kept"),
        );
        push(
            min.clone(),
            format!("after event {prefix}, only what was synced"),
        );
        let mut keys: Vec<&(bool, usize)> = groups.keys().collect();
        keys.sort();
        for key in keys {
            let (members, synced) = &groups[key];
            let unsynced = &members[*synced..];
            let kind = if key.0 { "directory" } else { "file" };
            for (rest_name, rest) in [("kept", &all), ("synced only", &min)] {
                for keep in 0..unsynced.len() {
                    let mut kept = rest.clone();
                    for (j, &i) in unsynced.iter().enumerate() {
                        kept[i] = j < keep;
                    }
                    push(
                        kept,
                        format!(
                            "after event {prefix}, {kind} {}: {keep} of {} unsynced kept, the rest {rest_name}",
                            key.1,
                            unsynced.len()
                        ),
                    );
                }
            }
            if !key.0 {
                for &lost in unsynced {
                    let mut kept = all.clone();
                    kept[lost] = false;
                    push(
                        kept,
                        format!("after event {prefix}, write {lost} alone lost"),
                    );
                }
            }
        }
    }
    out
}

/// Writes the tree of `crash` into `into` (an empty directory standing for
/// the traced root).
pub fn materialize(trace: &Trace, crash: &Crash, into: &Path) {
    let mut entries = trace.base_entries.clone();
    let mut data = trace.base_data.clone();
    for (e, _) in trace.events[..crash.prefix]
        .iter()
        .zip(&crash.kept)
        .filter(|(_, &k)| k)
    {
        match e {
            Event::Link { dir, name, inode } => {
                let names = entries.entry(*dir).or_default();
                names.retain(|(n, _)| n != name);
                names.push((name.clone(), *inode));
                if trace.kinds[*inode] == Kind::Dir {
                    entries.entry(*inode).or_default();
                } else {
                    data.entry(*inode).or_default();
                }
            }
            Event::Unlink { dir, name } => {
                entries.entry(*dir).or_default().retain(|(n, _)| n != name);
            }
            Event::Rename { dir, from, to } => {
                let names = entries.entry(*dir).or_default();
                let Some(at) = names.iter().position(|(n, _)| n == from) else {
                    panic!("{}: rename of a name not there", crash.what);
                };
                let inode = names.remove(at).1;
                names.retain(|(n, _)| n != to);
                names.push((to.clone(), inode));
            }
            Event::Write {
                inode,
                offset,
                data: bytes,
            } => {
                let d = data.entry(*inode).or_default();
                let end = *offset as usize + bytes.len();
                if d.len() < end {
                    d.resize(end, 0);
                }
                d[*offset as usize..end].copy_from_slice(bytes);
            }
            Event::Truncate { inode, len } => {
                data.entry(*inode).or_default().resize(*len as usize, 0);
            }
            Event::SyncFile { .. } | Event::SyncDir { .. } => {}
        }
    }
    write_tree(trace, &entries, &data, 0, into);
}

fn write_tree(
    trace: &Trace,
    entries: &HashMap<usize, Vec<(OsString, usize)>>,
    data: &HashMap<usize, Vec<u8>>,
    dir: usize,
    into: &Path,
) {
    for (name, inode) in entries.get(&dir).map(Vec::as_slice).unwrap_or_default() {
        let path = into.join(name);
        match trace.kinds[*inode] {
            Kind::Dir => {
                std::fs::create_dir(&path).expect("mkdir");
                write_tree(trace, entries, data, *inode, &path);
            }
            Kind::File => {
                let bytes = data.get(inode).map(Vec::as_slice).unwrap_or_default();
                std::fs::write(&path, bytes).expect("write");
            }
        }
    }
}
