//! Command-line front end. Library code lives in `urikey::uri` and
//! `urikey::engine`; this module only parses arguments, wires inputs and
//! outputs, and maps results to exit codes.

mod dedup;
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
closed output pipe is success); 1 some lines were invalid and --fail-on-invalid or \
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

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    started();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Dedup(a) => dedup::run(*a),
        Command::Normalize(a) => normalize::run(a),
        Command::Parse(a) => parse::run(a),
        Command::Resolve(a) => resolve::run(a),
        Command::State(c) => state::run(c),
        Command::Completions(a) => generate::completions(a),
        Command::Man(a) => generate::man(a),
    };
    messages::finish(result)
}
