//! Durability helpers: syncing a directory, and the test pause between the
//! steps of a commit.

use std::fs::File;
use std::path::Path;
#[cfg(feature = "__internal-testing")]
use std::sync::OnceLock;
#[cfg(feature = "__internal-testing")]
use std::time::Duration;

use super::error::StoreError;

/// Syncs `dir`, so that the names created, renamed or removed in it survive
/// a power loss.
///
/// # Errors
/// [`StoreError::Io`].
pub fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StoreError::io(dir, e))
}

/// The steps of a commit, in order (for the crash tests' pause).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A new run file is written and synced, not yet named by the manifest.
    RunWritten,
    /// The directory is synced with the new run files in it.
    RunsSynced,
    /// The new manifest is written to its temporary name, not synced.
    ManifestWritten,
    /// The new manifest is synced, not yet renamed.
    ManifestSynced,
    /// The new manifest is in place (the commit point has passed); the
    /// directory is not synced yet.
    Renamed,
    /// Runs no longer in the manifest are being removed.
    Removing,
}

/// The environment variable that makes every step of a commit sleep this
/// many milliseconds: a test hook for the crash harness (`SIGKILL` inside
/// a commit), not a setting, in builds with the crate's internal testing
/// feature only (the tests' builds, never a release).
#[cfg(feature = "__internal-testing")]
pub const PAUSE_ENV: &str = "URIKEY_STATE_COMMIT_PAUSE_MS";

/// Nothing in a build without the internal testing feature.
#[cfg(not(feature = "__internal-testing"))]
pub fn pause(_step: Step) {}

/// Sleeps at `step` when [`PAUSE_ENV`] asks for it.
#[cfg(feature = "__internal-testing")]
pub fn pause(_step: Step) {
    static PAUSE: OnceLock<Option<Duration>> = OnceLock::new();
    let pause = PAUSE.get_or_init(|| {
        std::env::var(PAUSE_ENV)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map(Duration::from_millis)
    });
    if let Some(d) = pause {
        std::thread::sleep(*d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durable_sync_dir_names_a_missing_dir() {
        let e = sync_dir(Path::new("/nonexistent/urikey-store")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/urikey-store"), "{e}");
        sync_dir(&std::env::temp_dir()).unwrap();
    }
}
