//! Decompresses a gzip file with the engine's member-parallel reader
//! (`urikey::engine::gzip`) and, for comparison, with one flate2
//! `MultiGzDecoder` stream, printing each rate in MB/s of output (best of
//! `--rounds`). Member-parallel runs in two ways: `chunks` reads into
//! chunks (one copy), `segments` takes a decoded segment at a time (no
//! copy, as `urikey dedup` takes them); `--modes` picks them, so a timed
//! run of the whole process decompresses the file exactly once:
//!
//! ```text
//! cargo run --release --example gunzip_members -- FILE [--threads 1,2] [--rounds 3] [--segment BYTES] [--modes chunks,segments] [--no-single]
//! ```

use std::io::Read;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Instant;

use urikey::engine::gzip::MemberReader;
use urikey::engine::SharedBytes;

/// Reads `r` to its end into a ring of 32 chunks of 768 KiB, as the
/// engine's reader fills the chunks of the batches in flight (so the
/// output goes to memory, not to one buffer that stays in cache).
fn drain(mut r: impl Read) -> std::io::Result<u64> {
    const CHUNK: usize = 768 << 10;
    let mut ring: Vec<Vec<u8>> = (0..32).map(|_| vec![0u8; CHUNK]).collect();
    let mut total = 0u64;
    let (mut k, mut at) = (0usize, 0usize);
    loop {
        let n = r.read(&mut ring[k][at..])?;
        if n == 0 {
            return Ok(total);
        }
        total += n as u64;
        at += n;
        if at == CHUNK {
            (k, at) = ((k + 1) % ring.len(), 0);
        }
    }
}

/// The comma-separated values of an option's argument (`usage` when it
/// is missing).
fn comma_list<T: std::str::FromStr>(
    arg: Option<String>,
    usage: &str,
) -> Result<Vec<T>, Box<dyn std::error::Error>>
where
    T::Err: std::error::Error + 'static,
{
    let arg = arg.ok_or(usage)?;
    Ok(arg.split(',').map(str::parse).collect::<Result<_, _>>()?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or(
        "usage: gunzip_members FILE [--threads 1,2] [--rounds N] [--segment BYTES] \
         [--modes chunks,segments] [--no-single]",
    )?;
    let mut threads = vec![1usize, 2];
    let mut rounds = 3;
    let mut segment = urikey::engine::gzip::SEGMENT;
    let mut single = true;
    let (mut chunks, mut segments) = (true, true);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--threads" => threads = comma_list(args.next(), "--threads N,M")?,
            "--rounds" => rounds = args.next().ok_or("--rounds N")?.parse()?,
            "--segment" => segment = args.next().ok_or("--segment BYTES")?.parse()?,
            "--modes" => {
                let modes: Vec<String> = comma_list(args.next(), "--modes chunks,segments")?;
                if let Some(m) = modes
                    .iter()
                    .find(|m| !["chunks", "segments"].contains(&m.as_str()))
                {
                    return Err(format!("unknown mode {m} (chunks, segments)").into());
                }
                chunks = modes.iter().any(|m| m == "chunks");
                segments = modes.iter().any(|m| m == "segments");
            }
            "--no-single" => single = false,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let file: Arc<[u8]> = Arc::from(std::fs::read(&path)?);
    let best = |f: &mut dyn FnMut() -> std::io::Result<u64>| -> std::io::Result<(u64, f64)> {
        let mut best = f64::INFINITY;
        let mut out = 0;
        for _ in 0..rounds {
            let t = Instant::now();
            out = f()?;
            best = best.min(t.elapsed().as_secs_f64());
        }
        Ok((out, best))
    };
    let mut one_stream = None;
    let report = |what: &str, out: u64, secs: f64, one_stream: Option<f64>| {
        let ratio = one_stream.map_or(String::new(), |one| {
            format!(" ({:.2}x one stream)", out as f64 / secs / one)
        });
        println!(
            "{what}: {:.1} MB out in {secs:.3} s: {:.0} MB/s{ratio}",
            out as f64 / 1e6,
            out as f64 / 1e6 / secs,
        );
    };
    if single {
        let (out, secs) = best(&mut || drain(flate2::read::MultiGzDecoder::new(&file[..])))?;
        report("flate2 MultiGzDecoder (one stream)", out, secs, None);
        one_stream = Some(out as f64 / secs);
    }
    let reader = |t: usize| {
        let bytes = SharedBytes::from_memory(Arc::clone(&file));
        let raw = Arc::new(AtomicU64::new(0));
        MemberReader::with_sizes(bytes, t, &raw, segment, urikey::engine::gzip::CAP)
    };
    for t in threads {
        if chunks {
            let (out, secs) = best(&mut || drain(reader(t)))?;
            report(
                &format!("member-parallel, {t} threads"),
                out,
                secs,
                one_stream,
            );
        }
        if segments {
            // The decoded segments taken whole, as the engine's line cutter
            // takes them (no copy), and given back once read.
            let (out, secs) = best(&mut || {
                let mut r = reader(t);
                let mut total = 0u64;
                while let Some(block) = r.next_block()? {
                    total += block.len() as u64;
                    r.give_back(block);
                }
                Ok(total)
            })?;
            let what = format!("member-parallel, {t} threads, whole segments");
            report(&what, out, secs, one_stream);
        }
    }
    Ok(())
}
