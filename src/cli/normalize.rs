//! `urikey normalize` (in progress).

use super::Exit;

/// Arguments of `urikey normalize`.
#[derive(clap::Args, Debug)]
pub struct NormalizeArgs {}

/// Runs `urikey normalize`.
pub fn run(_args: NormalizeArgs) -> anyhow::Result<Exit> {
    anyhow::bail!("normalize is not implemented yet")
}
