//! The `urikey` command: parse, resolve, normalize and deduplicate URIs.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
