//! `urikey resolve` (in progress).

use super::Exit;

/// Arguments of `urikey resolve`.
#[derive(clap::Args, Debug)]
pub struct ResolveArgs {}

/// Runs `urikey resolve`.
pub fn run(_args: ResolveArgs) -> anyhow::Result<Exit> {
    anyhow::bail!("resolve is not implemented yet")
}
