//! The `urikey` command: parse, resolve, normalize and deduplicate URIs.
//! The command lives in the library (`src/cli/`, feature `cli`), so that
//! the Python package runs the same code as `python -m urikey`.

use std::process::ExitCode;

fn main() -> ExitCode {
    urikey::cli::main()
}
