//! `urikey parse` (in progress).

use super::Exit;

/// Arguments of `urikey parse`.
#[derive(clap::Args, Debug)]
pub struct ParseArgs {}

/// Runs `urikey parse`.
pub fn run(_args: ParseArgs) -> anyhow::Result<Exit> {
    anyhow::bail!("parse is not implemented yet")
}
