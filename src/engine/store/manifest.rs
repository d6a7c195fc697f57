//! The manifest: which run files make up the store, its key configuration
//! and its commit counter. Replacing it is the one commit point.
//!
//! It is a short text file, `MANIFEST`, whose last line is the XXH3-64 of
//! everything before it:
//!
//! ```text
//! urikey-seen-store
//! format 1
//! key-version 1
//! identity flags=lowercase-scheme,...,remove-fragment
//! config crawl
//! key-format uri
//! commit 3
//! run run-00000001-0.ukr 1000000 16250216 4f1c0e3a5b6d7e8f 5e6f708192a3b4c5
//! run run-00000003-0.ukr 2041 33104 0a1b2c3d4e5f6071 d6e7f8091a2b3c4d
//! checksum 9a8b7c6d5e4f3021
//! ```
//!
//! A `run` line gives the file, its keys, its size, its header's checksum
//! and its content checksum (the trailer's, which covers every key), which
//! the file must match: a run file of another store is refused, however
//! alike. Format 1 (before the content checksum) is read too; its runs'
//! content checksums are taken from the files and written by the next
//! commit, in format 2. A new manifest is written to
//! `MANIFEST.tmp`, synced, renamed over `MANIFEST`, and the directory is
//! synced: a reader sees the old manifest or the new one, whole, and after
//! a crash the store is at one of them (see the `store` module docs).

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_64;

use super::durable::{pause, Step};
use super::error::StoreError;
use super::run_file::read_text;
use crate::uri::key::Identity;

/// The manifest's file name.
pub const MANIFEST: &str = "MANIFEST";
/// Where a new manifest is written before it is renamed.
pub const MANIFEST_TMP: &str = "MANIFEST.tmp";
/// The store format this build writes (and the newest it reads).
pub const STORE_FORMAT: u32 = 2;
/// The oldest store format this build reads: 1 has no content checksums.
const OLDEST_FORMAT: u64 = 1;
const FIRST_LINE: &str = "urikey-seen-store";

/// One run of the store, as the manifest lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunEntry {
    /// File name in the store's directory.
    pub name: String,
    /// Number of fingerprints.
    pub keys: u64,
    /// Size of the file.
    pub bytes: u64,
    /// The checksum of the file's header.
    pub header_sum: u64,
    /// The file's content checksum (`None` in a format-1 manifest).
    pub content_sum: Option<u64>,
}

/// The content of a manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// The key version of every fingerprint in the store.
    pub key_version: u32,
    /// The key configuration's identity (what decides fingerprints).
    pub identity: Identity,
    /// The key configuration as given when the store was made.
    pub config: String,
    /// The key format of that configuration (recorded, not compared:
    /// fingerprints are those of the `uri` key).
    pub key_format: String,
    /// Number of commits so far.
    pub commit: u64,
    /// The live runs.
    pub runs: Vec<RunEntry>,
}

impl Manifest {
    /// Total fingerprints (runs are disjoint).
    pub fn keys(&self) -> u64 {
        self.runs.iter().map(|r| r.keys).sum()
    }

    /// Total bytes of the run files.
    pub fn bytes(&self) -> u64 {
        self.runs.iter().map(|r| r.bytes).sum()
    }

    /// The manifest's text.
    pub fn encode(&self) -> String {
        let mut s = format!(
            "{FIRST_LINE}\nformat {STORE_FORMAT}\nkey-version {}\nidentity {}\nconfig {}\n\
             key-format {}\ncommit {}\n",
            self.key_version, self.identity, self.config, self.key_format, self.commit
        );
        for r in &self.runs {
            s.push_str(&format!(
                "run {} {} {} {:016x} {:016x}\n",
                r.name,
                r.keys,
                r.bytes,
                r.header_sum,
                r.content_sum.unwrap_or_default()
            ));
        }
        let sum = xxh3_64(s.as_bytes());
        s.push_str(&format!("checksum {sum:016x}\n"));
        s
    }

    /// Reads a manifest's text (`path` is for messages).
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] for a bad checksum or syntax,
    /// [`StoreError::NewerFormat`] for a newer format.
    pub fn decode(path: &Path, text: &str) -> Result<Self, StoreError> {
        let bad = |what: &str| StoreError::corrupt(path, what.to_owned());
        let text = text
            .strip_suffix('\n')
            .ok_or_else(|| bad("truncated manifest"))?;
        let body_end = text
            .rfind('\n')
            .map(|i| i + 1)
            .ok_or_else(|| bad("truncated manifest"))?;
        let (body, last) = text.split_at(body_end);
        let sum = last
            .strip_prefix("checksum ")
            .filter(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .ok_or_else(|| bad("no checksum line (truncated?)"))?;
        if xxh3_64(body.as_bytes()) != sum {
            return Err(bad("manifest checksum mismatch"));
        }
        // Split on '\n' alone: a field may end in '\r', which `lines()`
        // would drop, so that the manifest read back would differ.
        let mut lines = body.strip_suffix('\n').unwrap_or(body).split('\n');
        if lines.next() != Some(FIRST_LINE) {
            return Err(bad("not a seen-store manifest"));
        }
        // The format comes first: it decides how the lines after it read,
        // so a newer one is named before any of them is.
        let format = match lines.next().and_then(|l| l.strip_prefix("format ")) {
            Some(f) => f.parse::<u64>().map_err(|_| bad("bad number"))?,
            None => return Err(bad("no format line")),
        };
        if format < OLDEST_FORMAT {
            return Err(bad("unknown format"));
        }
        if format > u64::from(STORE_FORMAT) {
            return Err(StoreError::NewerFormat {
                path: path.to_owned(),
                found: u32::try_from(format).unwrap_or(u32::MAX),
                supported: STORE_FORMAT,
            });
        }
        let mut m = Manifest {
            key_version: 0,
            identity: Identity::default(),
            config: String::new(),
            key_format: String::new(),
            commit: 0,
            runs: Vec::new(),
        };
        let mut key_version = None;
        let mut seen: Vec<&str> = Vec::new();
        for line in lines {
            let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
            let number = |s: &str| s.parse::<u64>().map_err(|_| bad("bad number"));
            // A field given twice would leave which one counts to the
            // reader: such a manifest is not one this code wrote.
            if matches!(
                word,
                "key-version" | "identity" | "config" | "key-format" | "commit"
            ) {
                if seen.contains(&word) {
                    return Err(bad("a line given twice"));
                }
                seen.push(word);
            }
            match word {
                "format" => return Err(bad("a line given twice")),
                "key-version" => {
                    key_version =
                        Some(u32::try_from(number(rest)?).map_err(|_| bad("bad key version"))?);
                }
                "identity" => m.identity = Identity::from_text(rest),
                "config" => m.config = rest.to_owned(),
                "key-format" => m.key_format = rest.to_owned(),
                "commit" => m.commit = number(rest)?,
                "run" => {
                    let parts: Vec<&str> = rest.split(' ').collect();
                    let (name, keys, bytes, sum, content) = match parts[..] {
                        [name, keys, bytes, sum] if format == 1 => (name, keys, bytes, sum, None),
                        [name, keys, bytes, sum, content] if format != 1 => {
                            (name, keys, bytes, sum, Some(content))
                        }
                        _ => return Err(bad("bad run line")),
                    };
                    if !is_run_name(name) {
                        return Err(bad("bad run file name"));
                    }
                    m.runs.push(RunEntry {
                        name: name.to_owned(),
                        keys: number(keys)?,
                        bytes: number(bytes)?,
                        header_sum: u64::from_str_radix(sum, 16)
                            .map_err(|_| bad("bad run checksum"))?,
                        content_sum: content
                            .map(|c| u64::from_str_radix(c, 16))
                            .transpose()
                            .map_err(|_| bad("bad run checksum"))?,
                    });
                }
                // Lines a later minor version may add are skipped.
                _ => {}
            }
        }
        match key_version {
            Some(v) if !m.identity.is_empty() => {
                m.key_version = v;
                Ok(m)
            }
            _ => Err(bad("no key configuration")),
        }
    }

    /// Reads `dir`'s manifest.
    ///
    /// # Errors
    /// [`StoreError::NotAStore`] when there is none, else as
    /// [`decode`](Self::decode) and [`StoreError::Io`].
    pub fn read(dir: &Path) -> Result<Self, StoreError> {
        let path = dir.join(MANIFEST);
        match read_text(&path) {
            Ok(text) => Self::decode(&path, &text),
            Err(StoreError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound || dir.is_file() =>
            {
                Err(super::open::missing_manifest(dir))
            }
            Err(StoreError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::InvalidData =>
            {
                Err(StoreError::corrupt(
                    &path,
                    "not text (bytes that are not UTF-8)",
                ))
            }
            Err(e) => Err(e),
        }
    }

    /// Makes this manifest `dir`'s, atomically and durably: the commit
    /// point.
    ///
    /// # Errors
    /// [`StoreError::Io`]: the old manifest is then still in place;
    /// [`StoreError::CommitNotSynced`]: this one is in place, not synced.
    pub fn write(&self, dir: &Path) -> Result<(), StoreError> {
        let tmp: PathBuf = dir.join(MANIFEST_TMP);
        let io = |e| StoreError::io(&tmp, e);
        let mut f = File::create(&tmp).map_err(io)?;
        f.write_all(self.encode().as_bytes()).map_err(io)?;
        pause(Step::ManifestWritten);
        f.sync_all().map_err(io)?;
        drop(f);
        pause(Step::ManifestSynced);
        let path = dir.join(MANIFEST);
        fs::rename(&tmp, &path).map_err(|e| StoreError::io(&path, e))?;
        pause(Step::Renamed);
        // The commit point has passed: a failure now must not say the
        // commit was not made.
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|source| StoreError::CommitNotSynced {
                dir: dir.to_owned(),
                commit: self.commit,
                source,
            })
    }
}

/// True for the name of a run file: `run-<commit>-<n>.ukr`.
pub fn is_run_name(name: &str) -> bool {
    name.strip_prefix("run-")
        .and_then(|s| s.strip_suffix(".ukr"))
        .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b'-'))
}

/// The name of the `n`-th run file written by commit `commit`.
pub fn run_name(commit: u64, n: usize) -> String {
    format!("run-{commit:08}-{n}.ukr")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        Manifest {
            key_version: 1,
            identity: Identity::from_text("flags=a,b lenient"),
            config: "crawl +sort-query lenient".into(),
            key_format: "uri".into(),
            commit: 7,
            runs: vec![
                RunEntry {
                    name: run_name(3, 0),
                    keys: 100,
                    bytes: 2000,
                    header_sum: 0xdead_beef,
                    content_sum: Some(7),
                },
                RunEntry {
                    name: run_name(7, 1),
                    keys: 5,
                    bytes: 200,
                    header_sum: 1,
                    content_sum: Some(0),
                },
            ],
        }
    }

    #[test]
    fn manifest_round_trip() {
        let m = sample();
        let text = m.encode();
        assert_eq!(Manifest::decode(Path::new("M"), &text).unwrap(), m);
        assert_eq!(m.keys(), 105);
        assert!(is_run_name(&run_name(12, 3)));
        assert!(!is_run_name("run-.ukr") && !is_run_name("x.ukr") && !is_run_name("run-1/2.ukr"));
    }

    /// The body of `text` given its checksum line again (as a writer
    /// that made these lines would).
    fn resealed(body: &str) -> String {
        format!("{body}checksum {:016x}\n", xxh3_64(body.as_bytes()))
    }

    #[test]
    fn manifest_fields_keep_a_trailing_carriage_return() {
        // Found by the store_manifest fuzz target: `str::lines` took a
        // field's last '\r' for part of the line break.
        let mut m = sample();
        m.config = "crawl\r".into();
        let again = Manifest::decode(Path::new("M"), &m.encode()).unwrap();
        assert_eq!(again, m);
        assert_eq!(again.encode(), m.encode());
    }

    #[test]
    fn manifest_lines_given_twice_or_format_not_first_are_refused() {
        let text = sample().encode();
        let body = &text[..text.trim_end().rfind('\n').unwrap() + 1];
        let twice = body.replace("commit 7\n", "commit 7\ncommit 8\n");
        let format_later = body.replace("format 2\nkey-version 1\n", "key-version 1\nformat 2\n");
        let format_twice = body.replace("format 2\n", "format 1\nformat 2\n");
        for (bad, why) in [
            (twice, "a line given twice"),
            (format_later, "no format line"),
            (format_twice, "a line given twice"),
        ] {
            let err = Manifest::decode(Path::new("M"), &resealed(&bad)).unwrap_err();
            assert!(err.to_string().contains(why), "{err}");
        }
        // Lines a later version adds are still skipped.
        let extra = body.replace("commit 7\n", "commit 7\nshard 1\nshard 2\n");
        assert_eq!(
            Manifest::decode(Path::new("M"), &resealed(&extra)).unwrap(),
            sample()
        );
    }

    #[test]
    fn manifest_damage_is_found() {
        let text = sample().encode();
        // Every truncation, and every flipped character.
        for cut in 0..text.len() {
            assert!(
                Manifest::decode(Path::new("M"), &text[..cut]).is_err(),
                "cut {cut}"
            );
        }
        for at in 0..text.len() {
            let mut b = text.clone().into_bytes();
            b[at] ^= 0x01;
            let Ok(s) = String::from_utf8(b) else {
                continue;
            };
            assert!(Manifest::decode(Path::new("M"), &s).is_err(), "flip {at}");
        }
    }

    #[test]
    fn manifest_newer_format_is_named() {
        let text = sample().encode().replace("format 2", "format 9");
        let body_end = text.trim_end().rfind('\n').unwrap() + 1;
        let body = &text[..body_end];
        let text = format!("{body}checksum {:016x}\n", xxh3_64(body.as_bytes()));
        let e = Manifest::decode(Path::new("M"), &text).unwrap_err();
        assert!(matches!(e, StoreError::NewerFormat { found: 9, .. }), "{e}");
        // Named even when its lines read otherwise (a run line of more
        // fields): a newer urikey is what reads it, not a sign of damage.
        let body = body.replace(" 0000000000000007\n", " 0000000000000007 extra\n");
        assert!(body.contains(" extra\n"));
        let e = Manifest::decode(Path::new("M"), &resealed(&body)).unwrap_err();
        assert!(matches!(e, StoreError::NewerFormat { found: 9, .. }), "{e}");
    }

    #[test]
    fn manifest_write_replaces_atomically() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            Manifest::read(dir.path()),
            Err(StoreError::NotAStore { .. })
        ));
        let mut m = sample();
        m.write(dir.path()).unwrap();
        assert_eq!(Manifest::read(dir.path()).unwrap(), m);
        m.commit += 1;
        m.write(dir.path()).unwrap();
        assert_eq!(Manifest::read(dir.path()).unwrap().commit, 8);
        assert!(!dir.path().join(MANIFEST_TMP).exists());
    }
}
