//! Fuzz target `store_run_file`: a seen-store run file, opened, iterated,
//! looked up and verified, is an error or a right answer, never a panic.
//! Its input is either the file's bytes as they are, or a file the real
//! writer made from keys the input picks, with bytes the input changes,
//! and then (most often) its checksums made to match again, so that the
//! checks behind the checksums are reached. A file that `verify` passes
//! must find by lookup every key its iteration gives; an unchanged file
//! must give back exactly the keys written, and no other.

#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use urikey::engine::store::fuzzing::{
    run_name, seal_run_file, Manifest, RunEntry, RunFile, RunWriter,
};
use urikey::engine::store::verify;
use urikey::uri::key::Identity;

/// A directory of its own for this process, on tmpfs where there is one.
fn store_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = ["/dev/shm", "/tmp"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let dir = base.join(format!("urikey-fuzz-run-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

/// splitmix64: the keys a seed stands for.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn fp(state: &mut u64) -> u128 {
    (u128::from(next(state)) << 64) | u128::from(next(state))
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let dir = store_dir();
    let name = run_name(1, 0);
    let path = dir.join(&name);
    // The keys written, when the file is the writer's, unchanged.
    let mut written: Option<(Vec<u128>, u64)> = None;
    let bytes = if mode & 1 == 0 {
        let mut bytes = rest.to_vec();
        if mode & 2 != 0 {
            seal_run_file(&mut bytes);
        }
        bytes
    } else {
        // Keys from a seed, a directory sized for 1 to 2^17 keys (0 to 12
        // directory bits, so 16 or 15 bytes a key), then byte changes.
        if rest.len() < 11 {
            return;
        }
        let count = u64::from(u16::from_le_bytes([rest[0], rest[1]]) % 1024);
        let expected = count.max(1 << (rest[2] % 18));
        let mut seed = u64::from_le_bytes(rest[3..11].try_into().unwrap());
        let mut keys: Vec<u128> = (0..count).map(|_| fp(&mut seed)).collect();
        // Some runs crowd their keys into a few directory entries.
        if mode & 4 != 0 {
            for k in &mut keys {
                *k >>= 6;
            }
        }
        keys.sort_unstable();
        keys.dedup();
        let mut w = RunWriter::create(&path, expected).unwrap();
        for &k in &keys {
            w.push(k).unwrap();
        }
        w.finish().unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let changes = &rest[11..];
        for c in changes.chunks_exact(3) {
            let at = usize::from(u16::from_le_bytes([c[0], c[1]]));
            let len = bytes.len();
            if let Some(b) = bytes.get_mut(at % len) {
                *b ^= c[2];
            }
        }
        if changes.len() < 3 {
            written = Some((keys, seed));
        } else if mode & 2 == 0 {
            seal_run_file(&mut bytes);
        }
        bytes
    };
    std::fs::write(&path, &bytes).unwrap();

    let Ok(run) = RunFile::open(&path) else {
        assert!(written.is_none(), "the writer's own file did not open");
        return;
    };
    let iterated: Vec<_> = run.iter().collect();
    assert!(iterated.len() as u64 <= run.key_count());
    let keys: Vec<u128> = iterated
        .iter()
        .filter_map(|k| k.as_ref().ok())
        .copied()
        .collect();
    // Lookups of what iteration gave, one by one and sorted, and of keys
    // near them: errors are fine here, panics are not.
    let mut probes = keys.clone();
    probes.extend(keys.iter().map(|k| k.wrapping_add(1)));
    probes.extend(keys.iter().map(|k| k ^ (1 << 127)));
    probes.sort_unstable();
    let mut found = vec![false; probes.len()];
    let sorted = run.contains_sorted(&probes, &mut found);
    let single: Vec<_> = probes.iter().map(|&p| run.contains(p)).collect();

    // Verify the file as a store's one run.
    let manifest = Manifest {
        key_version: 1,
        identity: Identity::from_text("fuzz"),
        config: "fuzz".into(),
        key_format: "uri".into(),
        commit: 1,
        runs: vec![RunEntry {
            name,
            keys: run.key_count(),
            bytes: bytes.len() as u64,
            header_sum: run.header_sum(),
            content_sum: Some(run.content_sum()),
        }],
    };
    std::fs::write(dir.join("MANIFEST"), manifest.encode()).unwrap();
    let report = verify(dir);
    if report.is_ok() {
        assert_eq!(
            keys.len() as u64,
            run.key_count(),
            "verified, yet not every key iterated"
        );
        let found_sorted = sorted.as_ref().map(|()| &found);
        for (i, p) in probes.iter().enumerate() {
            let member = keys.binary_search(p).is_ok();
            assert_eq!(
                single[i].as_ref().ok(),
                Some(&member),
                "verified run: contains({p:#034x}) wrong"
            );
            assert_eq!(
                found_sorted.ok().map(|f| f[i]),
                Some(member),
                "verified run: contains_sorted({p:#034x}) wrong"
            );
        }
    }
    if let Some((keys_written, mut seed)) = written {
        assert!(
            report.is_ok(),
            "the writer's own file: {:?}",
            report.problems
        );
        assert_eq!(keys, keys_written);
        for _ in 0..64 {
            let other = fp(&mut seed);
            let member = keys_written.binary_search(&other).is_ok();
            assert_eq!(run.contains(other).unwrap(), member);
        }
    }
});
