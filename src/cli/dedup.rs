//! `urikey dedup` (in progress).

use super::Exit;

/// Arguments of `urikey dedup`.
#[derive(clap::Args, Debug)]
pub struct DedupArgs {}

/// Runs `urikey dedup`.
pub fn run(_args: DedupArgs) -> anyhow::Result<Exit> {
    anyhow::bail!("dedup is not implemented yet")
}
