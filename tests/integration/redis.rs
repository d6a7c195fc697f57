//! Redis seen-sets (`engine::redis`, `dedup --state redis://`, `urikey state`
//! on a URL) against real `redis-server`s on free loopback ports: one node,
//! and a 3-master cluster, each started here and stopped by a Drop guard.
//! Without `redis-server` on PATH the tests skip, saying so, unless
//! URIKEY_REQUIRE_REDIS=1 (CI).

use std::io::Write;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use tempfile::TempDir;
use urikey::engine::redis::{grow, Open, RedisSeenSet, RedisSession, RedisUrl};
use urikey::engine::PriorKeys;
use urikey::uri::key::{fingerprint, KeyConfig};

use super::common::{urikey, write};

/// A `redis-server` of this test, killed when dropped.
struct Server {
    child: Child,
    port: u16,
    _dir: TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// True when redis-server can run here; false (after saying so) when the
/// test is to skip.
fn have_redis(test: &str) -> bool {
    let found = Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var("URIKEY_REQUIRE_REDIS").as_deref() != Ok("1"),
            "URIKEY_REQUIRE_REDIS=1 but redis-server is not on PATH"
        );
        println!("SKIPPED {test}: redis-server is not on PATH (apt-get install redis-server)");
    }
    found
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn redis_cli(port: u16, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl Server {
    /// A server with `extra` options.
    fn start(extra: &[&str]) -> Server {
        let dir = tempfile::tempdir().unwrap();
        for _ in 0..5 {
            let port = free_port();
            let child = Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                .arg("--dir")
                .arg(dir.path())
                .args(extra)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let mut s = Server {
                child,
                port,
                _dir: tempfile::tempdir().unwrap(),
            };
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(5) {
                if s.child.try_wait().unwrap().is_some() {
                    break;
                }
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    s._dir = dir;
                    return s;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            drop(s);
        }
        panic!("redis-server did not start");
    }

    fn url(&self, name: &str) -> String {
        format!("redis://127.0.0.1:{}/0?name={name}", self.port)
    }

    fn cli(&self, args: &[&str]) -> String {
        redis_cli(self.port, args)
    }
}

/// Three masters made one cluster with `redis-cli --cluster create`.
fn cluster() -> Vec<Server> {
    let nodes: Vec<Server> = (0..3)
        .map(|_| Server::start(&["--cluster-enabled", "yes", "--cluster-node-timeout", "2000"]))
        .collect();
    let addrs: Vec<String> = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let out = Command::new("redis-cli")
        .args(["--cluster", "create"])
        .args(&addrs)
        .args(["--cluster-replicas", "0", "--cluster-yes"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let started = Instant::now();
    while !nodes
        .iter()
        .all(|n| n.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok"))
    {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the cluster did not form"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    nodes
}

fn config() -> KeyConfig {
    "crawl".parse().unwrap()
}

fn fps(range: std::ops::Range<u64>) -> Vec<u128> {
    range.map(|i| fingerprint(&i.to_le_bytes())).collect()
}

fn open(url: &str, planned: u64) -> RedisSeenSet {
    RedisSeenSet::connect(url, Some(&config()), Open::OrCreate(planned)).unwrap()
}

/// Several clients claim overlapping fingerprints at once: each is new to
/// exactly one of them; with `grow_to`, a grow runs meanwhile.
fn claims_are_exactly_once(url: &str, grow_to: Option<u64>) {
    const CLIENTS: usize = 4;
    let all = fps(0..6000);
    open(url, 1000);
    let barrier = Arc::new(Barrier::new(CLIENTS + usize::from(grow_to.is_some())));
    let mut handles = Vec::new();
    for c in 0..CLIENTS {
        let (url, barrier) = (url.to_owned(), barrier.clone());
        // Each client its own order, in batches.
        let mut mine = all.clone();
        mine.rotate_left(c * 1500);
        handles.push(std::thread::spawn(move || {
            let mut set = open(&url, 1000);
            barrier.wait();
            let mut won = Vec::new();
            for batch in mine.chunks(100) {
                let got = set.add_each(batch).unwrap();
                won.extend(batch.iter().zip(got).filter(|p| p.1).map(|p| *p.0));
            }
            won
        }));
    }
    let grower = grow_to.map(|n| {
        let (u, barrier) = (RedisUrl::parse(url).unwrap(), barrier.clone());
        std::thread::spawn(move || {
            barrier.wait();
            grow(&u, n).unwrap()
        })
    });
    let mut won: Vec<u128> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    if let Some(g) = grower {
        let r = g.join().unwrap();
        assert!(r.to > r.from, "{r:?}");
    }
    won.sort_unstable();
    let mut want = all.clone();
    want.sort_unstable();
    assert_eq!(won.len(), all.len(), "a fingerprint claimed twice or never");
    assert_eq!(won, want);
    let mut set = open(url, 1000);
    assert_eq!(set.key_count().unwrap(), all.len() as u64);
    assert!(set.contains_each(&all).unwrap().iter().all(|&f| f));
    assert!(!set
        .contains_each(&fps(6000..7000))
        .unwrap()
        .iter()
        .any(|&f| f));
    // Export: the kept bits of every fingerprint, ascending.
    let mut exported = Vec::new();
    set.for_each(|fp| {
        exported.push(fp);
        Ok::<(), ()>(())
    })
    .unwrap()
    .unwrap();
    let mut kept: Vec<u128> = all.iter().map(|&fp| set.layout().kept(fp)).collect();
    kept.sort_unstable();
    assert_eq!(exported, kept);
}

#[test]
fn redis_claims_are_exactly_once_across_clients() {
    if !have_redis("redis_claims_are_exactly_once_across_clients") {
        return;
    }
    let s = Server::start(&[]);
    claims_are_exactly_once(&s.url("claims"), None);
}

#[test]
fn redis_claims_stay_exactly_once_while_the_set_grows() {
    if !have_redis("redis_claims_stay_exactly_once_while_the_set_grows") {
        return;
    }
    let s = Server::start(&[]);
    claims_are_exactly_once(&s.url("growing"), Some(1 << 25));
    let info = open(&s.url("growing"), 0).info().unwrap();
    assert_eq!(info.meta.levels, [16, 17]);
    assert_eq!(info.meta.growing, None);
    // Growing again: one more level, followed through two tombstones by a
    // client that read the meta before both grows.
    let mut stale =
        RedisSeenSet::connect(&s.url("growing"), Some(&config()), Open::Existing).unwrap();
    grow(&RedisUrl::parse(&s.url("growing")).unwrap(), 0).unwrap();
    assert_eq!(stale.add_each(&fps(0..10)).unwrap(), [false; 10]);
    assert_eq!(stale.add_each(&fps(9000..9001)).unwrap(), [true]);
    assert_eq!(stale.meta().levels, [16, 17, 18]);
}

#[test]
fn redis_cluster_claims_spread_over_the_masters() {
    if !have_redis("redis_cluster_claims_spread_over_the_masters") {
        return;
    }
    let nodes = cluster();
    let url = nodes[1].url("fleet");
    claims_are_exactly_once(&url, Some(1 << 25));
    session_lookups_across_connections(&nodes[0].url("run"));
    let info = open(&url, 0).info().unwrap();
    assert_eq!(info.nodes.len(), 3);
    for n in &nodes {
        let keys: u64 = n.cli(&["DBSIZE"]).trim().parse().unwrap();
        assert!(keys > 1000, "a master holds {keys} keys");
    }
}

/// A run's lookups from several threads, each on a connection of its own
/// opened before a grow (so each follows the tombstones), in batches of
/// one (SISMEMBER) and of many (SMISMEMBER), answer as one client would.
fn session_lookups_across_connections(url: &str) {
    let held = fps(0..3000);
    open(url, 1000).add_all(&held).unwrap();
    let session = RedisSession::with_connections(open(url, 1000), true, 3).unwrap();
    assert_eq!(session.connections(), 3);
    grow(&RedisUrl::parse(url).unwrap(), 1 << 25).unwrap();
    let mut asked: Vec<(u128, bool)> = fps(0..6000)
        .into_iter()
        .enumerate()
        .map(|(i, fp)| (fp, i < 3000))
        .collect();
    asked.sort_unstable();
    let session = Arc::new(session);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (session, asked) = (session.clone(), asked.clone());
            std::thread::spawn(move || {
                for (b, batch) in asked.chunks(if t % 2 == 0 { 1 } else { 250 }).enumerate() {
                    if b % 4 != t {
                        continue;
                    }
                    let fps: Vec<u128> = batch.iter().map(|p| p.0).collect();
                    let mut found = vec![false; fps.len()];
                    session.contains_sorted(&fps, &mut found).unwrap();
                    let want: Vec<bool> = batch.iter().map(|p| p.1).collect();
                    assert_eq!(found, want);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    session.add_new(&fps(3000..4000)).unwrap();
    let c = session.commit().unwrap();
    assert_eq!((c.added, c.taken_meanwhile, c.keys), (1000, 0, 4000));
}

#[test]
fn redis_run_lookups_on_several_connections_follow_a_grow() {
    if !have_redis("redis_run_lookups_on_several_connections_follow_a_grow") {
        return;
    }
    let s = Server::start(&[]);
    session_lookups_across_connections(&s.url("run"));
}

#[test]
fn redis_concurrent_cli_writers_print_a_key_new_to_both() {
    if !have_redis("redis_concurrent_cli_writers_print_a_key_new_to_both") {
        return;
    }
    let s = Server::start(&[]);
    let keys = fps(0..1000);
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    let a = RedisSession::new(open(&s.url("two"), 1000), true);
    let b = RedisSession::new(open(&s.url("two"), 1000), true);
    for session in [&a, &b] {
        let mut found = vec![false; sorted.len()];
        session.contains_sorted(&sorted, &mut found).unwrap();
        assert!(!found.iter().any(|&f| f));
        session.add_new(&sorted).unwrap();
    }
    let ca = a.commit().unwrap();
    let cb = b.commit().unwrap();
    assert_eq!((ca.added, ca.taken_meanwhile, ca.keys), (1000, 0, 1000));
    assert_eq!((cb.added, cb.taken_meanwhile, cb.keys), (0, 1000, 1000));
}

fn lines(dir: &TempDir, name: &str, range: std::ops::Range<u32>) -> std::path::PathBuf {
    let mut text = String::new();
    for i in range {
        // Two spellings of each URL.
        text.push_str(&format!(
            "http://h{}.example/p/{i}\nHTTP://H{}.example:80/p/{i}#f\n",
            i % 7,
            i % 7
        ));
    }
    write(dir, name, text.as_bytes())
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = urikey().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn redis_cli_rounds_equal_one_dedup_and_export_matches_a_store() {
    if !have_redis("redis_cli_rounds_equal_one_dedup_and_export_matches_a_store") {
        return;
    }
    let s = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let url = s.url("rounds");
    let r1 = lines(&dir, "r1", 0..300);
    let r2 = lines(&dir, "r2", 200..500);
    let r3 = lines(&dir, "r3", 450..700);
    let all = dir.path().join("all");
    std::fs::write(
        &all,
        [&r1, &r2, &r3]
            .iter()
            .flat_map(|p| std::fs::read(p).unwrap())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let (code, _, err) = run(&[
        "state",
        "init",
        &url,
        "--profile",
        "crawl",
        "--expected-keys",
        "1000",
    ]);
    assert_eq!(code, 0, "{err}");
    let mut rounds = String::new();
    for r in [&r1, &r2, &r3] {
        let (code, out, err) = run(&[
            "dedup",
            "--profile",
            "crawl",
            "--state",
            &url,
            r.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        rounds.push_str(&out);
    }
    let (_, one, _) = run(&["dedup", "--profile", "crawl", all.to_str().unwrap()]);
    assert_eq!(rounds, one);
    // A disk store fed the same keys: the same fingerprints, in their kept bits.
    let store = dir.path().join("store");
    let (code, _, err) = run(&[
        "dedup",
        "--profile",
        "crawl",
        "--state",
        store.to_str().unwrap(),
        all.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let (_, disk, _) = run(&["state", "export", store.to_str().unwrap()]);
    let (code, redis, err) = run(&["state", "export", &url]);
    assert_eq!(code, 0, "{err}");
    let set = open(&url, 0);
    let kept: Vec<String> = disk
        .lines()
        .map(|l| {
            format!(
                "{:032x}",
                set.layout().kept(u128::from_str_radix(l, 16).unwrap())
            )
        })
        .collect();
    assert_eq!(redis.lines().collect::<Vec<_>>(), kept);
    assert_eq!(kept.len(), 700);
    // A store merged into a new set gives that export too.
    let url2 = s.url("merged");
    let (code, _, err) = run(&["state", "merge", &url2, store.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (_, merged, _) = run(&["state", "export", &url2]);
    assert_eq!(merged, redis);
    // The other way is refused: a store needs all 128 bits.
    let (code, _, err) = run(&["state", "merge", store.to_str().unwrap(), &url]);
    assert_eq!(code, 2);
    assert!(err.contains("128"), "{err}");
    let (code, info, _) = run(&["state", "info", &url, "--json"]);
    assert_eq!(code, 0);
    assert!(info.contains("\"keys\": 700"), "{info}");
}

#[test]
fn redis_cli_killed_run_adds_nothing() {
    if !have_redis("redis_cli_killed_run_adds_nothing") {
        return;
    }
    let s = Server::start(&[]);
    let url = s.url("killed");
    let bin = assert_cmd::cargo::cargo_bin("urikey");
    let mut child = Command::new(bin)
        .args(["dedup", "--no-progress", "--state", &url, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for i in 0..20_000 {
        writeln!(stdin, "http://a.example/{i}").unwrap();
    }
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    let mut set =
        RedisSeenSet::connect(&url, Some(&"rfc".parse().unwrap()), Open::Existing).unwrap();
    assert_eq!(set.key_count().unwrap(), 0);
}

#[test]
fn redis_bad_input_is_a_clear_error_naming_the_url() {
    if !have_redis("redis_bad_input_is_a_clear_error_naming_the_url") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = lines(&dir, "in", 0..2000);
    let input = input.to_str().unwrap();
    let dedup = |url: &str| {
        run(&[
            "dedup",
            "--no-progress",
            "--profile",
            "crawl",
            "--state",
            url,
            input,
        ])
    };
    // Unreachable.
    let port = free_port();
    let (code, out, err) = dedup(&format!("redis://u:hunter2@127.0.0.1:{port}/0"));
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(
        err.contains(&format!("127.0.0.1:{port}")) && err.contains("cannot reach"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
    // A wrong password.
    let s = Server::start(&["--requirepass", "right"]);
    let (code, _, err) = dedup(&format!("redis://:wrong@127.0.0.1:{}/0", s.port));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("credentials") && !err.contains("wrong@"),
        "{err}"
    );
    let (code, _, err) = dedup(&format!("redis://:right@127.0.0.1:{}/0", s.port));
    assert_eq!(code, 0, "{err}");
    // WRONGTYPE: the name's meta key is a list.
    let s = Server::start(&[]);
    s.cli(&["RPUSH", "taken:meta", "x"]);
    let (code, _, err) = dedup(&s.url("taken"));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("taken:meta") && err.contains("another type"),
        "{err}"
    );
    // A bucket key of another type: found when written.
    let (code, _, err) = dedup(&s.url("ok"));
    assert_eq!(code, 0, "{err}");
    // Another configuration, another layout version.
    let (code, _, err) = run(&["dedup", "--profile", "rfc", "--state", &s.url("ok"), input]);
    assert_eq!(code, 2);
    assert!(err.contains("`crawl`") && err.contains("`rfc`"), "{err}");
    let meta = s.cli(&["GET", "ok:meta"]).replace("layout 1", "layout 9");
    s.cli(&["SET", "ok:meta", meta.trim_end()]);
    let (code, _, err) = dedup(&s.url("ok"));
    assert_eq!(code, 2);
    assert!(
        err.contains("layout version 9") && err.contains("layout version 1"),
        "{err}"
    );
    // An evicting policy is refused at init and at open.
    s.cli(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"]);
    let (code, _, err) = dedup(&s.url("fresh"));
    assert_eq!(code, 2);
    assert!(
        err.contains("allkeys-lru") && err.contains("noeviction"),
        "{err}"
    );
    let (code, _, _) = run(&["state", "init", &s.url("fresh2")]);
    assert_eq!(code, 2);
    // Out of memory under noeviction: exit 2, the output complete, the keys
    // of the set before the run all there.
    let s = Server::start(&["--maxmemory", "3mb", "--maxmemory-policy", "noeviction"]);
    let big = lines(&dir, "big", 0..60_000);
    let first = lines(&dir, "first", 0..100);
    let (code, _, err) = run(&[
        "dedup",
        "--profile",
        "crawl",
        "--state",
        &s.url("full"),
        first.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(&[
        "dedup",
        "--profile",
        "crawl",
        "--state",
        &s.url("full"),
        big.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("out of memory") && err.contains(&s.url("full")),
        "{err}"
    );
    assert_eq!(out.lines().count(), 60_000 - 100);
    // The keys of the first run are all still seen.
    let (code, out, err) = run(&[
        "dedup",
        "--profile",
        "crawl",
        "--state-readonly",
        &s.url("full"),
        first.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "");
}
