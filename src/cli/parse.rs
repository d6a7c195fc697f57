//! `urikey parse`: show the components of every line.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use urikey::uri::UriRef;

use super::json;
use super::lines::{check_inputs, for_each_line, parse_problem, report_invalid, too_long};
use super::Exit;

/// Arguments of `urikey parse`.
#[derive(clap::Args, Debug)]
pub struct ParseArgs {
    /// One JSON object per line: input, valid, error {index, kind} or the raw
    /// components (scheme, userinfo, host, port, path, query, fragment) and
    /// host_type.
    #[arg(long)]
    json: bool,
    /// Input files (stdin when none or `-`).
    files: Vec<PathBuf>,
}

/// Runs `urikey parse`.
pub fn run(args: ParseArgs) -> anyhow::Result<Exit> {
    check_inputs(&args.files)?;
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    let mut text = String::new();
    for_each_line(&args.files, |line| {
        text.clear();
        if let Some((index, problem)) = too_long(line) {
            report_invalid(line, index, problem);
            if args.json {
                write_json_invalid(&mut text, line.bytes, index, &problem.to_string());
            }
            text.push('\n');
            out.write_all(text.as_bytes())?;
            return Ok(());
        }
        let parsed = UriRef::parse_bytes(line.bytes);
        if let Err(e) = &parsed {
            let (index, problem) = parse_problem(*e);
            report_invalid(line, index, problem);
        }
        if args.json {
            write_json(&mut text, line.bytes, &parsed);
        } else if let Ok(u) = &parsed {
            write_text(&mut text, u);
        }
        text.push('\n');
        out.write_all(text.as_bytes())?;
        Ok(())
    })?;
    out.flush()?;
    Ok(Exit::Ok)
}

fn write_json(
    out: &mut String,
    input: &[u8],
    parsed: &Result<UriRef<'_>, urikey::uri::ParseError>,
) {
    match parsed {
        Err(e) => write_json_invalid(out, input, e.index(), e.kind().message()),
        Ok(u) => {
            push_input(out, input);
            out.push_str(",\"valid\":true");
            let fields = [
                ("scheme", u.scheme()),
                ("userinfo", u.userinfo()),
                ("host", u.host()),
                ("port", u.port()),
                ("path", Some(u.path())),
                ("query", u.query()),
                ("fragment", u.fragment()),
                ("host_type", u.host_kind().map(urikey::uri::HostKind::name)),
            ];
            for (name, value) in fields {
                out.push_str(",\"");
                out.push_str(name);
                out.push_str("\":");
                json::push_opt(out, value);
            }
            out.push('}');
        }
    }
}

/// The JSON object of an invalid line.
fn write_json_invalid(out: &mut String, input: &[u8], index: usize, reason: &str) {
    push_input(out, input);
    out.push_str(",\"valid\":false,\"error\":{\"index\":");
    out.push_str(&index.to_string());
    out.push_str(",\"kind\":");
    json::push_str(out, reason);
    out.push_str("}}");
}

/// Opens a line's JSON object with its `input` member.
fn push_input(out: &mut String, input: &[u8]) {
    out.push_str("{\"input\":");
    // JSON strings are Unicode: invalid UTF-8 bytes show as U+FFFD.
    json::push_str(out, &String::from_utf8_lossy(input));
}

/// One line per input: `scheme=… userinfo=… host=…(kind) port=… path=…
/// query=… fragment=…`, with `-` for an absent component.
fn write_text(out: &mut String, u: &UriRef<'_>) {
    let opt = |s: Option<&str>| s.map_or_else(|| "-".to_owned(), |s| format!("{s:?}"));
    let host = match (u.host(), u.host_kind()) {
        (Some(h), Some(k)) => format!("{h:?}({})", k.name()),
        _ => "-".to_owned(),
    };
    out.push_str(&format!(
        "scheme={} userinfo={} host={host} port={} path={:?} query={} fragment={}",
        opt(u.scheme()),
        opt(u.userinfo()),
        opt(u.port()),
        u.path(),
        opt(u.query()),
        opt(u.fragment()),
    ));
}
