//! A seen-set in Redis (or Redis Cluster) shared by many clients: the
//! fingerprints of one key configuration under a name, claimed atomically
//! (`SADD`'s answer: exactly one client is told a key is new), at about 9
//! bytes a key. Redis is the distributed engine; urikey is the canonicalizer
//! and the layout (docs/redis.md).
//!
//! * `layout.rs`: buckets and members (intsets of 64-bit members).
//! * `meta.rs`: the meta key (layout and key version, configuration, plan).
//! * `transport.rs`: what the set asks of a connection; `client.rs`: our
//!   pipelined client, one server or every master of a cluster.
//! * `grow.rs`: moving buckets to a deeper level while clients write.
//! * `session.rs`: the set as a run's prior keys (`dedup --state redis://`).
//! * `url.rs`, `error.rs`.
//!
//! # Claims and moved buckets
//!
//! A fingerprint lives in one bucket at a time: the bucket of its level
//! while that key is a set, or, once a grow moved the bucket (one
//! transaction: members copied, the key replaced by the string
//! `urikey-moved LEVEL`), the bucket of the deeper level. A command on a
//! moved bucket fails with WRONGTYPE, and the client follows the tombstone.
//! So every claim is one `SADD` on the one set that holds the fingerprint's
//! bucket at that moment, whatever level the client believed current.

mod client;
mod error;
mod grow;
mod layout;
mod meta;
mod session;
mod transport;
mod url;

use std::time::Instant;

use crate::uri::key::KeyConfig;

pub use client::RedisClient;
pub use error::RedisSetError;
pub use grow::{grow, GrowReport};
pub use layout::{bits_for, Layout, GROW_MEAN, PLANNED_MEAN, TAG_BITS};
pub use meta::{Meta, LAYOUT_VERSION};
pub use session::{RedisCommit, RedisSession, RedisSessionStats};
pub use transport::{info_field, Op, Reply, Transport};
pub use url::{is_redis_url, RedisUrl, DEFAULT_NAME};

/// Keys a set is planned for when `init` is given no size: 2^16 buckets,
/// the fewest (see [`bits_for`]).
pub const DEFAULT_PLANNED: u64 = 10_000_000;

/// Times a command follows tombstones (one per grow since the client read
/// the meta).
const MAX_HOPS: usize = 8;

/// Most members in one SADD or SMISMEMBER of grouped members.
const GROUP: usize = 256;

/// How a set is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Open {
    /// An existing set only.
    Existing,
    /// An existing set, or a new one planned for this many keys.
    OrCreate(u64),
    /// A new set planned for this many keys (`state init`).
    CreateOnly(u64),
}

/// What a set holds (`state info`).
#[derive(Clone, Debug)]
pub struct RedisSetInfo {
    /// The URL without the password.
    pub url: String,
    /// The name.
    pub name: String,
    /// The meta.
    pub meta: Meta,
    /// Fingerprints held.
    pub keys: u64,
    /// Buckets (SET keys).
    pub buckets: u64,
    /// Members of the fullest bucket.
    pub fullest: u64,
    /// Buckets of more than 512 members (no longer intsets).
    pub over_intset: u64,
    /// Bits of a fingerprint compared.
    pub compared_bits: u32,
    /// Keys past which `state grow` is due (a mean bucket of [`GROW_MEAN`]).
    pub grow_at: u64,
    /// `used_memory` summed over the masters.
    pub used_memory: u64,
    /// The masters.
    pub nodes: Vec<String>,
}

/// A set in Redis. See the module docs.
#[derive(Debug)]
pub struct RedisSeenSet {
    t: Box<dyn Transport>,
    layout: Layout,
    meta: Meta,
}

/// Refuses a node whose `maxmemory-policy` evicts keys without a TTL (ours
/// have none, so `volatile-*` never evicts them).
///
/// # Errors
/// [`RedisSetError::EvictingPolicy`].
pub fn check_policy(t: &mut dyn Transport) -> Result<(), RedisSetError> {
    for (node, text) in t.info("memory")? {
        let policy = info_field(&text, "maxmemory_policy").unwrap_or("noeviction");
        if policy.starts_with("allkeys") {
            return Err(RedisSetError::EvictingPolicy {
                url: t.url().to_owned(),
                node,
                policy: policy.to_owned(),
            });
        }
    }
    Ok(())
}

/// The meta of set `name` on `t`, `None` when there is none.
///
/// # Errors
/// [`RedisSetError::BadMeta`], [`RedisSetError::WrongType`], connection
/// failures.
pub fn read_meta(t: &mut dyn Transport, name: &str) -> Result<Option<Meta>, RedisSetError> {
    let key = format!("{name}:meta");
    let reply = t.run(&[Op::Get { key: &key }])?;
    let url = t.url().to_owned();
    match reply.into_iter().next() {
        Some(Reply::Value(None)) => Ok(None),
        Some(Reply::Value(Some(text))) => Meta::decode(&text)
            .map(Some)
            .map_err(|why| RedisSetError::BadMeta { url, key, why }),
        Some(r) if r.is_wrong_type() => Err(RedisSetError::WrongType { url, key }),
        Some(Reply::Error { code, message }) => {
            Err(RedisSetError::from_reply(&url, "GET", &code, &message))
        }
        _ => Err(RedisSetError::BadMeta {
            url,
            key,
            why: "an unexpected reply".to_owned(),
        }),
    }
}

impl RedisSeenSet {
    /// Opens set `name` on `t` for keys of `config` (any configuration when
    /// `None`: info, export), making it when `open` says so.
    ///
    /// # Errors
    /// [`RedisSetError::EvictingPolicy`], [`RedisSetError::NoSet`],
    /// [`RedisSetError::Exists`], [`RedisSetError::ConfigMismatch`],
    /// [`RedisSetError::Version`], [`RedisSetError::BadMeta`], connection
    /// failures.
    pub fn open(
        mut t: Box<dyn Transport>,
        name: &str,
        config: Option<&KeyConfig>,
        open: Open,
    ) -> Result<Self, RedisSetError> {
        check_policy(&mut *t)?;
        let url = t.url().to_owned();
        let meta = match (read_meta(&mut *t, name)?, open) {
            (Some(_), Open::CreateOnly(_)) => return Err(RedisSetError::Exists { url }),
            (Some(m), _) => m,
            (None, Open::Existing) => return Err(RedisSetError::NoSet { url }),
            (None, Open::OrCreate(planned) | Open::CreateOnly(planned)) => {
                let Some(config) = config else {
                    return Err(RedisSetError::NoSet { url });
                };
                let m = Meta::new(config, planned, bits_for(planned));
                let key = format!("{name}:meta");
                if t.set_string(&key, &m.encode(), true)? {
                    m
                } else if let Open::CreateOnly(_) = open {
                    return Err(RedisSetError::Exists { url });
                } else {
                    // Made by another client meanwhile: its meta is the set's.
                    read_meta(&mut *t, name)?.ok_or(RedisSetError::NoSet { url })?
                }
            }
        };
        match config {
            Some(c) => meta.check(t.url(), c)?,
            None => meta.check_versions(t.url())?,
        }
        Ok(Self {
            layout: Layout::new(name, meta.base),
            t,
            meta,
        })
    }

    /// Connects to `url` with our client and opens its set.
    ///
    /// # Errors
    /// As [`RedisUrl::parse`], [`RedisClient::connect`] and
    /// [`open`](Self::open).
    pub fn connect(
        url: &str,
        config: Option<&KeyConfig>,
        open: Open,
    ) -> Result<Self, RedisSetError> {
        let u = RedisUrl::parse(url)?;
        let client = RedisClient::connect(&u)?;
        Self::open(Box::new(client), u.name(), config, open)
    }

    /// Another connection to this set (the same meta as last read), or
    /// `None` when its transport cannot make one.
    ///
    /// # Errors
    /// A failure to connect.
    pub fn another(&self) -> Option<Result<Self, RedisSetError>> {
        let t = self.t.reconnect()?;
        Some(t.map(|t| Self {
            t,
            layout: self.layout.clone(),
            meta: self.meta.clone(),
        }))
    }

    /// The URL without the password.
    pub fn url(&self) -> &str {
        self.t.url()
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The meta as last read.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// Reads the meta again (after a grow).
    ///
    /// # Errors
    /// As [`read_meta`]; [`RedisSetError::NoSet`] when it was removed.
    pub fn reload(&mut self) -> Result<(), RedisSetError> {
        let url = self.t.url().to_owned();
        let m = read_meta(&mut *self.t, self.layout.name())?.ok_or(RedisSetError::NoSet { url })?;
        m.check_versions(self.t.url())?;
        if m.base != self.meta.base || m.identity != self.meta.identity {
            return Err(RedisSetError::BadMeta {
                url: self.t.url().to_owned(),
                key: self.layout.meta_key(),
                why: "it was replaced by the meta of another set".to_owned(),
            });
        }
        self.meta = m;
        Ok(())
    }

    /// Claims `fps`: true for each that no client added before (exactly one
    /// caller among all clients is told a fingerprint is new; a
    /// fingerprint repeated in `fps` is new at its first place only).
    ///
    /// # Errors
    /// [`RedisSetError::OutOfMemory`] (the fingerprints before the failing
    /// command may be added), WRONGTYPE, connection failures.
    pub fn add_each(&mut self, fps: &[u128]) -> Result<Vec<bool>, RedisSetError> {
        let mut out = vec![false; fps.len()];
        let order: Vec<usize> = (0..fps.len()).collect();
        self.exec(fps, order, Kind::Claim, |idx, reply| {
            out[idx[0]] = reply == 1;
        })?;
        Ok(out)
    }

    /// Whether the set holds each of `fps` (in any order).
    ///
    /// # Errors
    /// WRONGTYPE, connection failures.
    pub fn contains_each(&mut self, fps: &[u128]) -> Result<Vec<bool>, RedisSetError> {
        let mut order: Vec<usize> = (0..fps.len()).collect();
        order.sort_unstable_by_key(|&i| fps[i]);
        let mut out = vec![false; fps.len()];
        self.exec_contains(fps, order, &mut out)?;
        Ok(out)
    }

    /// Whether the set holds each of `fps`, which are sorted, into `found`.
    ///
    /// # Errors
    /// As [`contains_each`](Self::contains_each).
    pub fn contains_sorted(
        &mut self,
        fps: &[u128],
        found: &mut [bool],
    ) -> Result<(), RedisSetError> {
        debug_assert!(fps.is_sorted() && fps.len() == found.len());
        found.fill(false);
        self.exec_contains(fps, (0..fps.len()).collect(), found)
    }

    /// Adds `fps` (any order, repeats allowed) in grouped commands, without
    /// saying which were new; returns how many were.
    ///
    /// # Errors
    /// As [`add_each`](Self::add_each).
    pub fn add_all(&mut self, fps: &[u128]) -> Result<u64, RedisSetError> {
        // The values sorted rather than their places (which reads them at
        // random).
        let mut sorted = fps.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let order: Vec<usize> = (0..sorted.len()).collect();
        let mut added = 0u64;
        self.exec(&sorted, order, Kind::AddGrouped, |_, n| {
            added += n as u64;
        })?;
        Ok(added)
    }

    /// Runs the lookups of `order` (indices of `fps`, sorted by
    /// fingerprint), following tombstones.
    fn exec_contains(
        &mut self,
        fps: &[u128],
        order: Vec<usize>,
        out: &mut [bool],
    ) -> Result<(), RedisSetError> {
        self.exec_with(fps, order, Kind::Contains, |idx, reply| match reply {
            Reply::Ints(v) => {
                for (&i, f) in idx.iter().zip(v) {
                    out[i] = f == 1;
                }
            }
            Reply::Int(f) if idx.len() == 1 => out[idx[0]] = f == 1,
            _ => {}
        })
    }

    /// Runs claims or grouped adds, each reply an integer.
    fn exec(
        &mut self,
        fps: &[u128],
        order: Vec<usize>,
        kind: Kind,
        mut each: impl FnMut(&[usize], i64),
    ) -> Result<(), RedisSetError> {
        let url = self.t.url().to_owned();
        let mut bad = None;
        self.exec_with(fps, order, kind, |idx, reply| match reply {
            Reply::Int(n) => each(idx, n),
            _ => {
                bad.get_or_insert(RedisSetError::Server {
                    url: url.clone(),
                    command: "SADD".to_owned(),
                    why: format!("an unexpected reply {reply:?}"),
                });
            }
        })?;
        bad.map_or(Ok(()), Err)
    }

    /// Runs the commands of `kind` for the fingerprints `order` (indices of
    /// `fps`; sorted by fingerprint for grouped kinds), following
    /// tombstones; `each` gets each command's indices and reply.
    fn exec_with(
        &mut self,
        fps: &[u128],
        mut order: Vec<usize>,
        kind: Kind,
        mut each: impl FnMut(&[usize], Reply),
    ) -> Result<(), RedisSetError> {
        let members: Vec<i64> = fps.iter().map(|&fp| self.layout.member(fp)).collect();
        let mut levels = vec![self.meta.level(); fps.len()];
        let mut followed = false;
        // One buffer for a batch's keys, its members in command order, and
        // each command's share of both: no allocation a command.
        let mut keys = String::new();
        let mut ordered: Vec<i64> = Vec::new();
        let mut commands: Vec<Command> = Vec::new();
        for _hop in 0..=MAX_HOPS {
            if order.is_empty() {
                break;
            }
            // Commands: one per fingerprint, or one per run of a bucket.
            keys.clear();
            ordered.clear();
            commands.clear();
            for (at, &i) in order.iter().enumerate() {
                let (level, bucket) = (levels[i], Layout::bucket(fps[i], levels[i]));
                ordered.push(members[i]);
                match commands.last_mut() {
                    Some(c)
                        if kind != Kind::Claim
                            && (c.level, c.bucket) == (level, bucket)
                            && c.at.len() < GROUP =>
                    {
                        c.at.end = at + 1;
                    }
                    _ => {
                        let from = keys.len();
                        self.layout.push_key(&mut keys, level, bucket);
                        commands.push(Command {
                            level,
                            bucket,
                            key: from..keys.len(),
                            at: at..at + 1,
                        });
                    }
                }
            }
            let ops: Vec<Op<'_>> = commands
                .iter()
                .map(|c| {
                    let (key, members) = (&keys[c.key.clone()], &ordered[c.at.clone()]);
                    match kind {
                        Kind::Contains => Op::Contains { key, members },
                        Kind::Claim | Kind::AddGrouped => Op::Add { key, members },
                    }
                })
                .collect();
            let replies = self.t.run(&ops)?;
            let mut moved: Vec<usize> = Vec::new();
            for (g, reply) in replies.into_iter().enumerate() {
                if reply.is_wrong_type() {
                    moved.push(g);
                    continue;
                }
                if let Reply::Error { code, message } = &reply {
                    return Err(RedisSetError::from_reply(
                        self.t.url(),
                        ops[g].name(),
                        code,
                        message,
                    ));
                }
                each(&order[commands[g].at.clone()], reply);
            }
            if moved.is_empty() {
                order.clear();
                break;
            }
            followed = true;
            // Where the moved buckets went.
            let mut moved_keys: Vec<&str> = moved.iter().map(|&g| ops[g].key()).collect();
            moved_keys.dedup();
            let gets: Vec<Op<'_>> = moved_keys.iter().map(|key| Op::Get { key }).collect();
            let values = self.t.run(&gets)?;
            let mut to = std::collections::HashMap::new();
            for (key, v) in moved_keys.iter().zip(values) {
                let level = match v {
                    Reply::Value(Some(v)) => Layout::parse_tombstone(&v),
                    _ => None,
                };
                let from = self.layout.parse_key(key).map_or(0, |(l, _)| l);
                match level {
                    Some(l) if l > from => {
                        to.insert(*key, l);
                    }
                    _ => {
                        return Err(RedisSetError::WrongType {
                            url: self.t.url().to_owned(),
                            key: (*key).to_owned(),
                        })
                    }
                }
            }
            let mut next = Vec::new();
            for &g in &moved {
                let level = to[ops[g].key()];
                for &i in &order[commands[g].at.clone()] {
                    levels[i] = level;
                    next.push(i);
                }
            }
            if kind != Kind::Claim {
                next.sort_unstable_by_key(|&i| fps[i]);
            }
            drop(ops);
            order = next;
        }
        if !order.is_empty() {
            return Err(RedisSetError::BadMeta {
                url: self.t.url().to_owned(),
                key: self.layout.meta_key(),
                why: format!("buckets moved more than {MAX_HOPS} times"),
            });
        }
        if followed {
            self.reload()?;
        }
        Ok(())
    }

    /// The SET keys of the set.
    fn bucket_keys(&mut self) -> Result<Vec<(String, u32, u64)>, RedisSetError> {
        let pattern = format!("{}:*", self.layout.name());
        let keys = self.t.set_keys(&pattern)?;
        Ok(keys
            .into_iter()
            .filter_map(|k| {
                let (level, bucket) = self.layout.parse_key(&k)?;
                Some((k, level, bucket))
            })
            .collect())
    }

    /// Fingerprints held (a SCARD of every bucket).
    ///
    /// # Errors
    /// Connection failures.
    pub fn key_count(&mut self) -> Result<u64, RedisSetError> {
        Ok(self.count()?.0)
    }

    /// Keys, buckets, the fullest bucket, buckets past 512.
    fn count(&mut self) -> Result<(u64, u64, u64, u64), RedisSetError> {
        let keys = self.bucket_keys()?;
        let ops: Vec<Op<'_>> = keys.iter().map(|(key, _, _)| Op::Card { key }).collect();
        let (mut total, mut fullest, mut over) = (0u64, 0u64, 0u64);
        for r in self.t.run(&ops)? {
            // A bucket moved since the SCAN is counted at its new level.
            if let Reply::Int(n) = r {
                let n = n.max(0) as u64;
                total += n;
                fullest = fullest.max(n);
                over += u64::from(n > 512);
            }
        }
        Ok((total, keys.len() as u64, fullest, over))
    }

    /// What the set holds.
    ///
    /// # Errors
    /// Connection failures.
    pub fn info(&mut self) -> Result<RedisSetInfo, RedisSetError> {
        self.reload()?;
        let (keys, buckets, fullest, over_intset) = self.count()?;
        let memory = self.t.info("memory")?;
        let used_memory = memory
            .iter()
            .filter_map(|(_, text)| info_field(text, "used_memory")?.parse::<u64>().ok())
            .sum();
        Ok(RedisSetInfo {
            url: self.t.url().to_owned(),
            name: self.layout.name().to_owned(),
            compared_bits: self.layout.compared_bits(),
            grow_at: (1u64 << self.meta.level()) * GROW_MEAN,
            meta: self.meta.clone(),
            keys,
            buckets,
            fullest,
            over_intset,
            used_memory,
            nodes: memory.into_iter().map(|(n, _)| n).collect(),
        })
    }

    /// Every fingerprint the set holds (the compared bits, the others
    /// zero; see [`Layout::kept`]), ascending, passed to `each`; returns
    /// how many. Not while a grow runs (a bucket moved during the scan
    /// could be missed).
    ///
    /// # Errors
    /// [`RedisSetError::Unsupported`] during a grow; connection failures;
    /// the first error of `each`.
    pub fn for_each<E>(
        &mut self,
        mut each: impl FnMut(u128) -> Result<(), E>,
    ) -> Result<Result<u64, E>, RedisSetError> {
        self.reload()?;
        if let Some(g) = self.meta.growing {
            return Err(RedisSetError::Unsupported {
                url: self.t.url().to_owned(),
                why: format!(
                    "a grow to level {g} is running; read the set after it ends (a grow \
                     that was stopped finishes when a grow is started again)"
                ),
            });
        }
        let mut keys = self.bucket_keys()?;
        // By hash tag, then level: a tag's fingerprints are one range.
        keys.sort_unstable_by_key(|(_, level, bucket)| (bucket >> (level - TAG_BITS), *level));
        let mut n = 0u64;
        let mut start = 0;
        let started = Instant::now();
        while start < keys.len() {
            // About 256 tags at a time.
            let first_tag = keys[start].2 >> (keys[start].1 - TAG_BITS);
            let mut end = start;
            while end < keys.len() && (keys[end].2 >> (keys[end].1 - TAG_BITS)) < first_tag + 256 {
                end += 1;
            }
            let chunk = &keys[start..end];
            let ops: Vec<Op<'_>> = chunk
                .iter()
                .map(|(key, _, _)| Op::Members { key })
                .collect();
            let mut fps = Vec::new();
            for ((_, level, bucket), r) in chunk.iter().zip(self.t.run(&ops)?) {
                match r {
                    Reply::Ints(members) => fps.extend(
                        members
                            .into_iter()
                            .map(|m| self.layout.fingerprint(*level, *bucket, m)),
                    ),
                    // Moved since the SCAN: its members are at the new level.
                    r if r.is_wrong_type() => {}
                    Reply::Error { code, message } => {
                        return Err(RedisSetError::from_reply(
                            self.t.url(),
                            "SMEMBERS",
                            &code,
                            &message,
                        ))
                    }
                    _ => {}
                }
            }
            fps.sort_unstable();
            fps.dedup();
            for fp in fps {
                if let Err(e) = each(fp) {
                    return Ok(Err(e));
                }
                n += 1;
            }
            start = end;
        }
        let _ = started;
        Ok(Ok(n))
    }
}

/// One command of a batch: its bucket, its key in the batch's key buffer,
/// and its fingerprints' places in the batch's order.
struct Command {
    level: u32,
    bucket: u64,
    key: std::ops::Range<usize>,
    at: std::ops::Range<usize>,
}

/// What the commands of a batch do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// One SADD a fingerprint: its answer is the claim.
    Claim,
    /// SADD of a bucket's members at once: a count.
    AddGrouped,
    /// SMISMEMBER of a bucket's members at once.
    Contains,
}
