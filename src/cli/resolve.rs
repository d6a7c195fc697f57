//! `urikey resolve`: resolve every line against a base URI (§5.2).

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context;
use urikey::uri::{Resolver, UriRef};

use super::lines::{check_inputs, for_each_line, parse_problem, report_invalid, too_long};
use super::Exit;

/// Arguments of `urikey resolve`.
#[derive(clap::Args, Debug)]
pub struct ResolveArgs {
    /// The base URI (must have a scheme; its fragment is ignored).
    #[arg(long)]
    base: String,
    /// Treat a reference whose scheme equals the base's as relative
    /// (`http:g`), the backward-compatible mode of RFC 3986 §5.2.2.
    #[arg(long)]
    non_strict: bool,
    /// Input files of references (stdin when none or `-`).
    files: Vec<PathBuf>,
}

/// Runs `urikey resolve`.
pub fn run(args: ResolveArgs) -> anyhow::Result<Exit> {
    let base =
        UriRef::parse(&args.base).with_context(|| format!("invalid --base {:?}", args.base))?;
    anyhow::ensure!(
        !base.is_relative(),
        "invalid --base {:?}: a base URI needs a scheme",
        args.base
    );
    check_inputs(&args.files)?;
    let resolver = Resolver::new().non_strict(args.non_strict);
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let mut target = String::new();
    for_each_line(&args.files, |line| {
        target.clear();
        if let Some((index, problem)) = too_long(line) {
            report_invalid(line, index, problem);
        } else {
            match UriRef::parse_bytes(line.bytes) {
                Ok(r) => resolver.resolve_into(&base, &r, &mut target)?,
                Err(e) => {
                    let (index, problem) = parse_problem(e);
                    report_invalid(line, index, problem);
                }
            }
        }
        target.push('\n');
        out.write_all(target.as_bytes())?;
        Ok(())
    })?;
    out.flush()?;
    Ok(Exit::Ok)
}
