//! Command-line front end. Library code lives in `urikey::uri` and
//! `urikey::engine`; this module only parses arguments, wires inputs and
//! outputs, and maps results to exit codes.

mod dedup;
mod json;
mod lines;
mod messages;
mod normalize;
mod normalize_opts;
mod parse;
mod progress;
mod resolve;
mod rss;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use messages::Exit;

/// Turn URIs into canonical keys and deduplicate large URL dumps.
#[derive(Parser, Debug)]
#[command(name = "urikey", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Deduplicate URL lines by canonical key, keeping the first of each.
    Dedup(dedup::DedupArgs),
    /// Print the canonical key of every line.
    Normalize(normalize::NormalizeArgs),
    /// Parse every line as a URI-reference and show its components.
    Parse(parse::ParseArgs),
    /// Resolve every line as a reference against a base URI (RFC 3986 §5.2).
    Resolve(resolve::ResolveArgs),
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Dedup(a) => dedup::run(a),
        Command::Normalize(a) => normalize::run(a),
        Command::Parse(a) => parse::run(a),
        Command::Resolve(a) => resolve::run(a),
    };
    messages::finish(result)
}
