//! Keys are a stable interface: `urikey dedup` on the committed sample must
//! print exactly what the previous release printed, for every profile and
//! key format. The table holds the SHA-256 of that output; a change to it is
//! a key change, made on purpose and listed in `CHANGELOG.md`.

use assert_cmd::Command;
use sha2::{Digest, Sha256};

/// (arguments after `dedup`, SHA-256 of stdout): release 0.1.0, except the
/// `surt` rows, which changed with the SURT of `https` keys (CHANGELOG.md,
/// Unreleased).
const OUTPUTS: &[(&str, &str)] = &[
    (
        "--profile none --key uri",
        "bf76b6df7b253d5a010725e2ceac7800e24a976b239955630539d4cfa20a56dc",
    ),
    (
        "--profile none --key surt",
        "575627d8fb3e99a47ef309ea06f779567d6d51df725650b0aa15e0ad8bdd8c5a",
    ),
    (
        "--profile none --key hash",
        "5a78646722e1206ef825dbeb07c7f1b0d3c30cbbcff9eccaf4929fcf780471ad",
    ),
    (
        "--profile syntax --key uri",
        "1aa89be1af45ce6aa1de826dfceb1d0119ae886b63c246d1f2ed7033269e3298",
    ),
    (
        "--profile syntax --key surt",
        "394402b79c6174d09047aadbf2a6ac5948e028d93884ac756fd9c6f0064723c4",
    ),
    (
        "--profile syntax --key hash",
        "1a3ab43d345d735cd8c850c72f599f4e953980fa44f0d327a841fd3a081d0fa3",
    ),
    (
        "--profile rfc --key uri",
        "15211dc5415fd38ec7c54f37bfe43fbff7ec5d4e4cb3eda74773b1c15d6a5907",
    ),
    (
        "--profile rfc --key surt",
        "5508058019da2cf8431c52a3cb69cf1941b22fe82e25c7c28697bcc911dc9919",
    ),
    (
        "--profile rfc --key hash",
        "b379c8d3375f98e65ac8e7b6a5fd90b248c727cf4092ec94819a6d5c0627652f",
    ),
    (
        "--profile crawl --key uri",
        "b0d5fb8d1b2b1fdc4e0047fbb0dcec8f23cc563f50324288c9d4a4274be25fea",
    ),
    (
        "--profile crawl --key surt",
        "c07f58e61d90d0aca3b3872aa44779fef088d4fcc42fb60b7cbbeda25384fc03",
    ),
    (
        "--profile crawl --key hash",
        "8ee16a019529c3ea83068ca41813a5d0ddfbc41313b0d261da9fa83851d5ac89",
    ),
    (
        "--profile none --emit original",
        "bf76b6df7b253d5a010725e2ceac7800e24a976b239955630539d4cfa20a56dc",
    ),
    (
        "--profile syntax --emit original",
        "392fa3f6d93ab482f8c40d57fecd6193688c7763cdadae89a9828ac92b2a84d1",
    ),
    (
        "--profile rfc --emit original",
        "15211dc5415fd38ec7c54f37bfe43fbff7ec5d4e4cb3eda74773b1c15d6a5907",
    ),
    (
        "--profile crawl --emit original",
        "15211dc5415fd38ec7c54f37bfe43fbff7ec5d4e4cb3eda74773b1c15d6a5907",
    ),
    (
        "--profile none --lenient",
        "ad598c05a99b1111bebd2ebbc9c409bd0a927407ee4c82be641c3d05357eae30",
    ),
    (
        "--profile syntax --lenient",
        "39e779c7bb3a36912ac0c3cd927b0119c6bb16ccb79455c139d00b38b81ff816",
    ),
    (
        "--profile rfc --lenient",
        "27c5fafb7b881a9e6e493d8844a4ec1c22a4d79e24e5dab097f4c795c90e838c",
    ),
    (
        "--profile crawl --lenient",
        "aef5a23ba22cbbdc5f18b687db054fbc5ed0f609409e8605b3063203724929f8",
    ),
];

#[test]
fn dedup_output_on_the_sample_is_unchanged() {
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/crawl-sample.txt");
    let mut changed = Vec::new();
    for (args, want) in OUTPUTS {
        let out = Command::cargo_bin("urikey")
            .unwrap()
            .arg("dedup")
            .args(["-q", "--no-progress", "--threads", "2"])
            .args(args.split(' '))
            .arg(sample)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args}: {out:?}");
        let got = format!("{:x}", Sha256::digest(&out.stdout));
        if got != *want {
            changed.push(format!("dedup {args}: {got}"));
        }
    }
    assert!(
        changed.is_empty(),
        "keys changed (list the change in CHANGELOG.md and update this table):\n{}",
        changed.join("\n")
    );
}
