//! Exit codes and the final error message.

use std::io;
use std::process::ExitCode;

use crate::engine::redis::RedisSetError;
use crate::engine::store::StoreError;
use crate::engine::Error;

/// Named exit codes (see the README's exit-code table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Everything went fine (a closed output pipe counts as fine).
    Ok = 0,
    /// The run finished, but some lines were invalid and the user asked
    /// for that to be an error (`--on-invalid fail`, `--fail-on-invalid`).
    InvalidLines = 1,
    /// A usage or I/O error: the output is not complete.
    Error = 2,
    /// Ctrl-C, SIGTERM or SIGHUP: the run stopped, no output file was
    /// written (128 + SIGINT, as shells report it).
    Interrupted = 130,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e as u8)
    }
}

/// True when `err` (or its cause chain) is a broken pipe.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// `err` and its causes joined by `: `, each cause once: a cause whose
/// words the message before it already holds (an OS error that a store's
/// message quotes) is not repeated.
pub fn message(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    if let Some(commands) = err.chain().find_map(commands_for) {
        out.push_str(&format!(" ({commands})"));
    }
    out
}

/// The commands that do what a seen-store's or a Redis set's message says
/// to do (the engine's messages name no command: its callers differ).
fn commands_for(cause: &(dyn std::error::Error + 'static)) -> Option<String> {
    // A run's error holds them as its own (its message is theirs).
    let run_error = cause.downcast_ref::<Error>();
    let store = cause.downcast_ref::<StoreError>().or(match run_error {
        Some(Error::Store(e)) => Some(e),
        _ => None,
    });
    let redis = cause.downcast_ref::<RedisSetError>().or(match run_error {
        Some(Error::Redis(e)) => Some(e),
        _ => None,
    });
    if let Some(e) = store {
        return match e {
            StoreError::Corrupt { .. } => Some(format!(
                "{}; `urikey state verify` lists every problem",
                rebuild("NEW", None)
            )),
            StoreError::NotAStore {
                dir,
                can_make: true,
                ..
            } => {
                let dir = shell_word(&dir.to_string_lossy());
                Some(format!(
                    "`urikey state init {dir}` or `urikey dedup --state {dir}`"
                ))
            }
            StoreError::KeyVersion {
                store,
                current,
                config,
                ..
            } if store < current => Some(rebuild("NEW", Some(config))),
            _ => None,
        };
    }
    match redis? {
        RedisSetError::NoSet { url } => {
            Some(format!("`urikey state init {}` makes one", shell_word(url)))
        }
        RedisSetError::Version { config, .. } => {
            Some(rebuild("'redis://...?name=NEW'", Some(config)))
        }
        _ => None,
    }
}

/// The commands that rebuild a store (or a set, `new` being its place) of
/// the configuration `config` from the inputs it was fed.
pub fn rebuild(new: &str, config: Option<&str>) -> String {
    let config = config
        .map(|c| format!(" --config '{c}'"))
        .unwrap_or_default();
    format!(
        "`urikey state init {new}{config}`, then `urikey dedup --state {new} INPUTS... > \
         /dev/null`"
    )
}

/// `word` as a shell reads it: quoted when it holds anything but plain
/// path and URL characters.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-:@%+,=".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Maps a command's result to the process exit code, printing errors as
/// `urikey: <message>: <cause>`.
pub fn finish(result: anyhow::Result<Exit>) -> Exit {
    match result {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => Exit::Ok,
        Err(err) => {
            super::report::say!("{}", message(&err));
            Exit::Error
        }
    }
}
