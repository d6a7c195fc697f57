//! Command-line front end. Library code lives in `urikey::uri` and
//! `urikey::engine`; this module only parses arguments, wires inputs and
//! outputs, and maps results to exit codes.
//!
//! It is part of the library (feature `cli`, hidden from the docs) so that
//! two front ends run one implementation: the `urikey` binary
//! (`src/main.rs`) and the Python package's `urikey` command and
//! `python -m urikey`, which call [`main_with_args`] through the extension
//! module. Not a public API: only these two call it.

mod dedup;
mod export_parquet;
mod format_opts;
mod generate;
mod json;
mod lines;
mod messages;
mod normalize;
mod normalize_opts;
mod output;
mod parse;
mod progress;
mod redis_state;
mod report;
mod resolve;
mod state;

use std::process::ExitCode;
use std::sync::OnceLock;
use std::time::Instant;

use clap::{Parser, Subcommand};

pub use messages::Exit;

/// The exit codes, for `--help` and the man page (the README's table).
const EXIT_STATUS: &str = "Exit status: 0 success (invalid lines are reported, not fatal; a \
closed output pipe is success, except for dedup --state, which then adds nothing); 1 some lines were invalid and --fail-on-invalid or \
--on-invalid fail asked for an error; 2 usage or I/O error (no output file is left under its \
name); 130 interrupted (Ctrl-C, SIGTERM, SIGHUP).";

/// Turn URIs into canonical keys and deduplicate large URL dumps.
#[derive(Parser, Debug)]
#[command(name = "urikey", version, about, long_about = None, after_long_help = EXIT_STATUS)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Deduplicate URL lines by canonical key, keeping the first of each.
    Dedup(Box<dedup::DedupArgs>),
    /// Print the canonical key of every line.
    Normalize(normalize::NormalizeArgs),
    /// Parse every line as a URI-reference and show its components.
    Parse(parse::ParseArgs),
    /// Resolve every line as a reference against a base URI (RFC 3986 §5.2).
    Resolve(resolve::ResolveArgs),
    /// Make, inspect, check, compact, merge and export seen-stores (the
    /// keys `dedup --state` remembers across runs).
    #[command(subcommand)]
    State(state::StateCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(generate::CompletionsArgs),
    /// Print the man page (roff), or write one per command into a directory.
    Man(generate::ManArgs),
}

/// When the command line started: `--stats` times the whole run from here.
static STARTED: OnceLock<Instant> = OnceLock::new();

/// The start of the process (the first call of [`main`]).
fn started() -> Instant {
    *STARTED.get_or_init(Instant::now)
}

/// Runs the command line of this process and returns its exit code.
pub fn main() -> ExitCode {
    let code = main_with_args(std::env::args_os());
    ExitCode::from(u8::try_from(code).unwrap_or(Exit::Error as u8))
}

/// Runs the command line `args` (the program name first, as
/// `std::env::args_os` gives it) and returns the exit code (see
/// `EXIT_STATUS`). Help, version and usage errors are printed and
/// returned as codes 0 and 2; nothing here ends the process, except
/// Ctrl-C (SIGINT, SIGTERM, SIGHUP) during a run, which removes partial
/// output files and exits with 130, as the command always has.
pub fn main_with_args<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    started();
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout, errors to stderr; a closed
            // stream is not worth a panic.
            if e.use_stderr() {
                // Every error of the command reads `urikey: <message>`.
                let text = e.render().to_string();
                let text = text.strip_prefix("error: ").unwrap_or(&text);
                let _ = std::io::Write::write_all(
                    &mut std::io::stderr(),
                    format!("urikey: {text}").as_bytes(),
                );
            } else {
                let _ = e.print();
            }
            return e.exit_code();
        }
    };
    let result = match cli.command {
        Command::Dedup(a) => dedup::run(*a),
        Command::Normalize(a) => normalize::run(a),
        Command::Parse(a) => parse::run(a),
        Command::Resolve(a) => resolve::run(a),
        Command::State(c) => state::run(c),
        Command::Completions(a) => generate::completions(a),
        Command::Man(a) => generate::man(a),
    };
    messages::finish(result) as i32
}
