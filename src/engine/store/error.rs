//! Why a seen-store cannot be opened, read or committed. Every message names
//! the store's directory (or the file) and says what to do, in words that
//! hold for every caller (the command line adds its commands).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// An error of a [`SeenStore`](super::SeenStore).
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// A file of the store could not be read, written or synced.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },
    /// A file of the store is damaged: truncated, with a wrong checksum, or
    /// not what the manifest says. Nothing is read from it.
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// The directory is not a seen-store (no manifest).
    NotAStore {
        /// The directory.
        dir: PathBuf,
        /// Why it is not one.
        why: String,
        /// A writer makes a store there (the directory is missing, empty,
        /// or left by a writer stopped while making one).
        can_make: bool,
    },
    /// `create` was asked for a directory that already holds a store or
    /// other files.
    Exists {
        /// The directory.
        dir: PathBuf,
    },
    /// Another process holds the store's writer lock.
    Locked {
        /// The directory.
        dir: PathBuf,
        /// What the lock file says of its holder (pid, host, since when).
        holder: String,
    },
    /// The store holds keys of another key configuration.
    ConfigMismatch {
        /// The directory.
        dir: PathBuf,
        /// The store's configuration (as written at `init`) and identity.
        store: String,
        /// The configuration asked for, and its identity.
        asked: String,
    },
    /// The store was built with another key version (see
    /// [`KEY_VERSION`](crate::uri::key::KEY_VERSION)): its fingerprints are
    /// not those this build computes.
    KeyVersion {
        /// The directory.
        dir: PathBuf,
        /// The store's key version.
        store: u32,
        /// This build's key version.
        current: u32,
        /// The store's configuration, for the rebuild command.
        config: String,
    },
    /// The store was written by a newer urikey, in a format this build does
    /// not read.
    NewerFormat {
        /// The file.
        path: PathBuf,
        /// Its format version.
        found: u32,
        /// The newest this build reads.
        supported: u32,
    },
    /// The new manifest is in place (the commit was made: the store and
    /// its readers are at the new commit), but the directory could not be
    /// synced after the rename: a power loss may still take the store back
    /// to the commit before.
    CommitNotSynced {
        /// The directory.
        dir: PathBuf,
        /// The commit made.
        commit: u64,
        /// What the operating system said.
        source: io::Error,
    },
    /// A store opened read-only was asked to change.
    ReadOnly {
        /// The directory.
        dir: PathBuf,
    },
}

impl StoreError {
    /// An I/O error on `path`.
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        StoreError::Io {
            path: path.to_owned(),
            source,
        }
    }

    /// `path` is damaged: `what`.
    pub(crate) fn corrupt(path: &Path, what: impl Into<String>) -> Self {
        StoreError::Corrupt {
            path: path.to_owned(),
            what: what.into(),
        }
    }

    /// True when the commit asked for was made (its manifest is in place),
    /// though an error followed.
    pub fn committed(&self) -> bool {
        matches!(self, StoreError::CommitNotSynced { .. })
    }

    /// True for damage found by a check (not an I/O failure, not a lock).
    pub fn is_corrupt(&self) -> bool {
        matches!(self, StoreError::Corrupt { .. })
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Io { path, source } => {
                write!(f, "seen-store: cannot use {}: {source}", path.display())
            }
            StoreError::Corrupt { path, what } => write!(
                f,
                "seen-store: {} is damaged ({what}); nothing was read from it. Restore the \
                 store from a copy, or rebuild it from the inputs it was fed",
                path.display()
            ),
            StoreError::NotAStore { dir, why, can_make } => {
                write!(f, "{} is not a seen-store: {why}", dir.display())?;
                if *can_make {
                    f.write_str("; opening it to write makes one")?;
                }
                Ok(())
            }
            StoreError::Exists { dir } => write!(
                f,
                "{} already exists and is not empty: a new seen-store needs a new or empty \
                 directory",
                dir.display()
            ),
            StoreError::Locked { dir, holder } => write!(
                f,
                "seen-store {} is locked by another writer ({holder}); one writer at a time \
                 (read-only use needs no lock)",
                dir.display()
            ),
            StoreError::ConfigMismatch { dir, store, asked } => write!(
                f,
                "seen-store {} holds keys of {store}, not of {asked}: mixing keys would \
                 silently break deduplication; use the store's options, or another store",
                dir.display()
            ),
            StoreError::KeyVersion {
                dir,
                store,
                current,
                config,
            } if store < current => write!(
                f,
                "seen-store {} holds keys of key version {store}, and this urikey computes key \
                 version {current} (the CHANGELOG lists what changed): rebuild it from the \
                 inputs it was fed, as a new store of the configuration `{config}`",
                dir.display()
            ),
            StoreError::KeyVersion {
                dir,
                store,
                current,
                ..
            } => write!(
                f,
                "seen-store {} holds keys of key version {store}, newer than this urikey's \
                 ({current}): use a newer urikey",
                dir.display()
            ),
            StoreError::NewerFormat {
                path,
                found,
                supported,
            } => write!(
                f,
                "{} is in seen-store format {found}, newer than this urikey reads ({supported}): \
                 use a newer urikey",
                path.display()
            ),
            StoreError::CommitNotSynced {
                dir,
                commit,
                source,
            } => write!(
                f,
                "seen-store {}: commit {commit} was made, but the directory could not be \
                 synced after it ({source}): a power loss may still take the store back to \
                 commit {}",
                dir.display(),
                commit.saturating_sub(1)
            ),
            StoreError::ReadOnly { dir } => {
                write!(f, "seen-store {} was opened read-only", dir.display())
            }
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_error_messages_name_the_place_and_the_way_out() {
        let e = StoreError::KeyVersion {
            dir: "/s".into(),
            store: 1,
            current: 2,
            config: "crawl".into(),
        }
        .to_string();
        assert!(
            e.contains("/s") && e.contains("rebuild") && e.contains("`crawl`"),
            "{e}"
        );
        // The library names no command: its callers differ (the command
        // line adds its own).
        assert!(!e.contains("urikey state"), "{e}");
        let e = StoreError::KeyVersion {
            dir: "/s".into(),
            store: 3,
            current: 2,
            config: "crawl".into(),
        }
        .to_string();
        assert!(e.contains("newer urikey"), "{e}");
        let e = StoreError::ConfigMismatch {
            dir: "/s".into(),
            store: "`crawl`".into(),
            asked: "`rfc`".into(),
        }
        .to_string();
        assert!(e.contains("`crawl`") && e.contains("`rfc`"), "{e}");
        assert!(StoreError::corrupt(Path::new("/s/x"), "bad").is_corrupt());
    }
}
