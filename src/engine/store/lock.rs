//! The writer lock: one writer per store at a time.
//!
//! A writer holds an exclusive `flock` on the store's `LOCK` file for as
//! long as it is open, and writes its pid, host and start time into the file
//! so that a second writer's error can name it. The kernel drops a `flock`
//! when its process ends, however it ends (`SIGKILL` included): a lock left
//! by a dead process is free, and the next writer takes it over without any
//! step of its own. The file itself stays; its content names the last
//! holder. Readers (`--state-readonly`, `state info`, `state verify`,
//! `state export`) take no lock.
//!
//! `flock` is local to one machine: two hosts writing one store over a
//! network file system are not kept apart (the host in the file says who
//! was there).

// flock(2) on the store's lock file and gethostname(2), through libc.
#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use super::error::StoreError;

/// The lock file's name.
pub const LOCK: &str = "LOCK";

/// A held writer lock; dropping it releases the lock.
#[derive(Debug)]
pub struct WriterLock {
    _file: File,
}

impl WriterLock {
    /// Takes `dir`'s writer lock, at once or not at all.
    ///
    /// # Errors
    /// [`StoreError::Locked`] naming the holder when another open file
    /// (this process's or another's) holds it; [`StoreError::Io`].
    pub fn take(dir: &Path) -> Result<Self, StoreError> {
        let path = dir.join(LOCK);
        let io = |e| StoreError::io(&path, e);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        // SAFETY: flock on a file descriptor we own, with constant flags.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::WouldBlock {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                return Err(StoreError::Locked {
                    dir: dir.to_owned(),
                    holder: if holder.is_empty() {
                        "a writer that has not said who it is yet".to_owned()
                    } else {
                        holder.to_owned()
                    },
                });
            }
            return Err(io(err));
        }
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let me = format!(
            "pid {} on host {} since {}\n",
            std::process::id(),
            hostname(),
            utc(since)
        );
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(me.as_bytes()).map_err(io)?;
        Ok(Self { _file: file })
    }
}

/// Who holds `dir`'s writer lock now, if anyone (for `state info`).
pub fn holder(dir: &Path) -> Option<String> {
    let path = dir.join(LOCK);
    let mut file = File::open(&path).ok()?;
    // SAFETY: as in `take`; a shared probe, released at once.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    if rc == 0 {
        // SAFETY: releases the probe taken just above.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
        return None;
    }
    let mut s = String::new();
    let _ = file.read_to_string(&mut s);
    Some(s.trim().to_owned())
}

/// `secs` since the Unix epoch as `2026-12-02 04:41:13 UTC`.
fn utc(secs: u64) -> String {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Howard Hinnant's civil-from-days, for days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// This machine's name (`?` when it has none).
fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer and its length are given together.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "?".to_owned();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_holder_time_is_a_date() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_795_407_673), "2026-11-23 04:21:13 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
    }

    #[test]
    fn lock_second_writer_is_refused_naming_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let first = WriterLock::take(dir.path()).unwrap();
        assert!(holder(dir.path()).is_some());
        let e = WriterLock::take(dir.path()).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, StoreError::Locked { .. }), "{msg}");
        assert!(
            msg.contains(&format!("pid {}", std::process::id())),
            "{msg}"
        );
        drop(first);
        assert_eq!(holder(dir.path()), None);
        // Released: the next writer takes it (the file stays).
        let _again = WriterLock::take(dir.path()).unwrap();
        assert!(dir.path().join(LOCK).exists());
    }
}
