//! Redis sets from the command line: `dedup --state redis://...` (the
//! [`RedisState`] of one run) and `urikey state init|info|export|merge|grow`
//! given a URL (docs/redis.md).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use urikey::engine::redis::{
    grow, Open, RedisCommit, RedisSeenSet, RedisSession, RedisSessionStats, RedisUrl,
    DEFAULT_PLANNED,
};
use urikey::engine::store::{Access, SeenStore};
use urikey::engine::PriorKeys;
use urikey::uri::key::KeyConfig;

use super::report::say_raw;
use super::Exit;

/// The Redis set of one `dedup` run.
pub struct RedisState {
    session: Arc<RedisSession>,
    readonly: bool,
    url: String,
    keys_before: u64,
    opened_in: Duration,
}

/// What a run did to its set.
pub struct RedisStateReport {
    url: String,
    readonly: bool,
    keys_before: u64,
    session: RedisSessionStats,
    commit: Option<RedisCommit>,
    opened_in: Duration,
    commit_time: Duration,
}

/// Most connections a run makes to its set: past the cores of one machine
/// more only cost Redis a client each.
const MAX_CONNECTIONS: usize = 16;

impl RedisState {
    /// True when the run's new keys are added at its end (not read-only).
    pub fn commits(&self) -> bool {
        !self.readonly
    }

    /// The set's URL as messages show it (no password).
    pub fn shown_url(&self) -> String {
        shown(&self.url)
    }

    /// Opens (or makes, for writing) the set at `url` for keys of `config`,
    /// with a connection for each of the run's `threads` (at most
    /// [`MAX_CONNECTIONS`]).
    pub fn open(
        url: &str,
        config: &KeyConfig,
        readonly: bool,
        threads: usize,
    ) -> anyhow::Result<Self> {
        let started = Instant::now();
        let open = if readonly {
            Open::Existing
        } else {
            Open::OrCreate(DEFAULT_PLANNED)
        };
        let mut set = RedisSeenSet::connect(url, Some(config), open)?;
        let keys_before = set.key_count()?;
        let url = set.url().to_owned();
        Ok(Self {
            session: Arc::new(RedisSession::with_connections(
                set,
                !readonly,
                threads.clamp(1, MAX_CONNECTIONS),
            )?),
            readonly,
            url,
            keys_before,
            opened_in: started.elapsed(),
        })
    }

    /// The set as the run's prior set.
    pub fn prior(&self) -> Arc<dyn PriorKeys> {
        self.session.clone()
    }

    /// Adds the run's new keys to the set.
    pub fn commit(self) -> anyhow::Result<RedisStateReport> {
        let started = Instant::now();
        let commit = if self.readonly {
            None
        } else {
            Some(self.session.commit().with_context(|| {
                "the output is complete, but its new keys were not all added to the Redis set (a \
                 next run prints those again)"
            })?)
        };
        let mut report = self.unchanged();
        report.commit = commit;
        report.commit_time = started.elapsed();
        Ok(report)
    }

    /// The report of a run whose keys are not added.
    pub fn unchanged(self) -> RedisStateReport {
        RedisStateReport {
            url: self.url.clone(),
            readonly: self.readonly,
            keys_before: self.keys_before,
            session: self.session.stats(),
            commit: None,
            opened_in: self.opened_in,
            commit_time: Duration::ZERO,
        }
    }
}

impl RedisStateReport {
    fn keys_after(&self) -> u64 {
        self.commit.as_ref().map_or(self.keys_before, |c| c.keys)
    }

    /// The `--stats` lines.
    pub fn human(&self) -> String {
        let s = &self.session;
        let what = match (&self.commit, self.readonly) {
            (_, true) => "read-only, nothing added".to_owned(),
            (Some(c), _) => format!(
                "{} added ({:.3} s){}",
                c.added,
                self.commit_time.as_secs_f64(),
                if c.taken_meanwhile > 0 {
                    format!(
                        ", {} added meanwhile by another client (printed by both runs)",
                        c.taken_meanwhile
                    )
                } else {
                    String::new()
                }
            ),
            (None, _) => "not committed".to_owned(),
        };
        format!(
            "urikey: state {}: {} keys before, {} after; {} first-seen keys looked up, {} \
             known ({:.3} s summed over threads); {what}\n\
             urikey: state: opened in {:.3} s\n",
            self.url,
            self.keys_before,
            self.keys_after(),
            s.lookups,
            s.known,
            s.lookup_time.as_secs_f64(),
            self.opened_in.as_secs_f64(),
        )
    }

    /// The `"state"` object of `--stats-json`.
    pub fn json(&self) -> String {
        let c = self.commit.as_ref();
        format!(
            "{{\"url\": {}, \"readonly\": {}, \"keys_before\": {}, \"keys_after\": {}, \
             \"lookups\": {}, \"known\": {}, \"added\": {}, \"taken_meanwhile\": {}, \
             \"lookup_seconds\": {:.6}, \"commit_seconds\": {:.6}, \"open_seconds\": {:.6}}}",
            super::json::string(&self.url),
            self.readonly,
            self.keys_before,
            self.keys_after(),
            self.session.lookups,
            self.session.known,
            c.map_or(0, |c| c.added),
            c.map_or(0, |c| c.taken_meanwhile),
            self.session.lookup_time.as_secs_f64(),
            self.commit_time.as_secs_f64(),
            self.opened_in.as_secs_f64(),
        )
    }
}

/// `state init URL`.
pub fn init(url: &str, config: &KeyConfig, expected: Option<u64>) -> anyhow::Result<Exit> {
    let planned = expected.unwrap_or(DEFAULT_PLANNED);
    let set = RedisSeenSet::connect(url, Some(config), Open::CreateOnly(planned))?;
    say_raw(&format!(
        "urikey: made Redis set {} for keys of `{config}`, planned for {planned} keys ({} \
         buckets, {} bits compared)\n",
        set.url(),
        1u64 << set.meta().level(),
        set.layout().compared_bits()
    ));
    Ok(Exit::Ok)
}

/// `state info URL`.
pub fn info(url: &str, json: bool) -> anyhow::Result<Exit> {
    let mut set = RedisSeenSet::connect(url, None, Open::Existing)?;
    let i = set.info()?;
    let m = &i.meta;
    let levels: Vec<String> = m.levels.iter().map(u32::to_string).collect();
    let per_key = if i.keys == 0 {
        0.0
    } else {
        i.used_memory as f64 / i.keys as f64
    };
    let out = if json {
        format!(
            "{{\n  \"url\": {},\n  \"name\": {},\n  \"keys\": {},\n  \"buckets\": {},\n  \
             \"fullest_bucket\": {},\n  \"buckets_over_intset\": {},\n  \"planned\": {},\n  \
             \"grow_at\": {},\n  \"compared_bits\": {},\n  \"level\": {},\n  \"levels\": [{}],\n  \
             \"growing\": {},\n  \"config\": {},\n  \"identity\": {},\n  \"key_version\": {},\n  \
             \"layout_version\": {},\n  \"used_memory\": {},\n  \"nodes\": [{}]\n}}\n",
            super::json::string(&i.url),
            super::json::string(&i.name),
            i.keys,
            i.buckets,
            i.fullest,
            i.over_intset,
            m.planned,
            i.grow_at,
            i.compared_bits,
            m.level(),
            levels.join(", "),
            m.growing.map_or("null".to_owned(), |g| g.to_string()),
            super::json::string(&m.config),
            super::json::string(m.identity.as_str()),
            m.key_version,
            m.layout,
            i.used_memory,
            i.nodes
                .iter()
                .map(|n| super::json::string(n))
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        let mut s = format!(
            "set:         {}\nkeys:        {}\nbuckets:     {} (fullest {} members, {} past \
             512)\nplanned:     {} keys; grow past {} (`urikey state grow`)\ncompared:    {} \
             bits of each fingerprint\nlevels:      {}{}\nconfig:      {}\nidentity:    {}\n\
             key version: {}\nlayout:      {}\nmemory:      {} bytes used by Redis ({:.2} a key; \
             all of Redis, not only the set)\nnodes:       {}\n",
            i.url,
            i.keys,
            i.buckets,
            i.fullest,
            i.over_intset,
            m.planned,
            i.grow_at,
            i.compared_bits,
            levels.join(" "),
            m.growing
                .map_or(String::new(), |g| format!(" (growing to {g})")),
            m.config,
            m.identity,
            m.key_version,
            m.layout,
            i.used_memory,
            per_key,
            i.nodes.join(" ")
        );
        if i.keys > i.grow_at || i.over_intset > 0 {
            s.push_str(
                "note:        the set is past its plan: run `urikey state grow URL \
                 --expected-keys N` (safe while clients write)\n",
            );
        }
        s
    };
    std::io::stdout()
        .write_all(out.as_bytes())
        .context("cannot write stdout")?;
    Ok(Exit::Ok)
}

/// `state export URL`: every fingerprint the set holds, through `each`.
pub fn for_each(
    url: &str,
    name: &Path,
    mut each: impl FnMut(u128) -> std::io::Result<()>,
) -> anyhow::Result<(u64, String, String)> {
    let mut set = RedisSeenSet::connect(url, None, Open::Existing)?;
    let (config, identity) = (set.meta().config.clone(), set.meta().identity.to_string());
    match set.for_each(&mut each)? {
        Ok(n) => Ok((n, config, identity)),
        Err(e) => Err(e).with_context(|| format!("cannot write {}", name.display())),
    }
}

/// The meta of the set at `url`.
pub fn meta(url: &str) -> anyhow::Result<urikey::engine::redis::Meta> {
    Ok(RedisSeenSet::connect(url, None, Open::Existing)?
        .meta()
        .clone())
}

/// `state merge TARGET SOURCES...` where a Redis set is involved.
pub fn merge(target: &str, sources: &[&str]) -> anyhow::Result<Exit> {
    if !urikey::engine::redis::is_redis_url(target) {
        bail!(
            "cannot merge a Redis set into the seen-store {}: a Redis set keeps 80 to 104 \
             bits of each fingerprint (docs/redis.md), a seen-store needs all 128 to answer for \
             the keys it is fed. Feed the store the inputs instead, or keep the set",
            shown(target)
        );
    }
    // The target's configuration is the first source's when the target is new.
    for source in sources {
        let started = Instant::now();
        let (added, from_keys) = if urikey::engine::redis::is_redis_url(source) {
            let mut from = RedisSeenSet::connect(source, None, Open::Existing)?;
            let config: KeyConfig = from
                .meta()
                .config
                .parse()
                .with_context(|| format!("the configuration of {}", from.url()))?;
            let mut to =
                RedisSeenSet::connect(target, Some(&config), Open::OrCreate(from.meta().planned))?;
            if to.layout().base() > from.layout().base() {
                bail!(
                    "{} keeps {} bits of each fingerprint, fewer than {} needs ({}): merge into a \
                     set planned for fewer keys",
                    from.url(),
                    from.layout().compared_bits(),
                    to.url(),
                    to.layout().compared_bits()
                );
            }
            let mut all = Vec::new();
            let n = match from.for_each(|fp| {
                all.push(fp);
                Ok::<(), std::convert::Infallible>(())
            })? {
                Ok(n) => n,
                Err(e) => match e {},
            };
            (to.add_all(&all)?, n)
        } else {
            let store = SeenStore::open(Path::new(source), Access::ReadOnly)?;
            let config: KeyConfig = store
                .config()
                .parse()
                .with_context(|| format!("the configuration of {source}"))?;
            let mut to = RedisSeenSet::connect(
                target,
                Some(&config),
                Open::OrCreate(store.len().max(DEFAULT_PLANNED)),
            )?;
            let mut added = 0u64;
            let mut chunk = Vec::with_capacity(1 << 16);
            let mut failed = None;
            let n = store.for_each(Path::new(source), |fp| {
                chunk.push(fp);
                if chunk.len() == chunk.capacity() {
                    match to.add_all(&chunk) {
                        Ok(a) => added += a,
                        Err(e) => {
                            let text = e.to_string();
                            failed = Some(e);
                            return Err(std::io::Error::other(text));
                        }
                    }
                    chunk.clear();
                }
                Ok(())
            });
            if let Some(e) = failed {
                return Err(e.into());
            }
            let n = n?;
            added += to.add_all(&chunk)?;
            (added, n)
        };
        say_raw(&format!(
            "urikey: {}: {added} keys added from {} ({from_keys} keys) in {:.3} s\n",
            shown(target),
            shown(source),
            started.elapsed().as_secs_f64()
        ));
    }
    Ok(Exit::Ok)
}

/// A store's path or a set's URL without its password, for messages.
fn shown(place: &str) -> String {
    if urikey::engine::redis::is_redis_url(place) {
        RedisUrl::parse(place).map_or_else(|_| "the Redis set".to_owned(), |u| u.shown().to_owned())
    } else {
        place.to_owned()
    }
}

/// `state grow URL --expected-keys N`.
pub fn grow_set(url: &str, expected: u64) -> anyhow::Result<Exit> {
    let u = RedisUrl::parse(url)?;
    let r = grow(&u, expected)?;
    say_raw(&format!(
        "urikey: {}: grown from level {} to {} ({} buckets): {} buckets and {} members moved, {} \
         transactions retried for clients writing meanwhile, {:.3} s\n",
        u.shown(),
        r.from,
        r.to,
        1u64 << r.to,
        r.moved,
        r.members,
        r.retries,
        r.took.as_secs_f64()
    ));
    Ok(Exit::Ok)
}
