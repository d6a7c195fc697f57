//! `urikey completions` and `urikey man`: shell completion scripts and man
//! pages generated from the command-line definition, so they never drift
//! from the options the binary accepts.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::CommandFactory;

use super::{Cli, Exit};

/// Arguments of `urikey completions`.
#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Arguments of `urikey man`.
#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Write `urikey.1` and one page per command (`urikey-dedup.1`, ...)
    /// into DIR instead of printing `urikey.1` on stdout.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Prints the completion script for a shell on stdout.
pub fn completions(args: CompletionsArgs) -> anyhow::Result<Exit> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "urikey", &mut out);
    io::stdout().write_all(&out)?;
    Ok(Exit::Ok)
}

/// Prints the man page on stdout, or writes all pages into a directory.
pub fn man(args: ManArgs) -> anyhow::Result<Exit> {
    let cmd = Cli::command();
    match args.dir {
        Some(dir) => {
            clap_mangen::generate_to(cmd, &dir)
                .with_context(|| format!("cannot write man pages into {}", dir.display()))?;
        }
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut out)?;
            io::stdout().write_all(&out)?;
        }
    }
    Ok(Exit::Ok)
}
