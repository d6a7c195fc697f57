//! Growing a set past its plan while clients write (`urikey state grow`):
//! every bucket of the current level is moved to the buckets of a deeper
//! level, so that no bucket passes 512 members (where Redis turns an intset
//! into a hash table of about 80 bytes a member).
//!
//! 1. The meta gets `growing LEVEL` (under WATCH: one grow at a time; a grow
//!    interrupted is finished by running it again).
//! 2. For each hash tag (a bucket and its children share one slot), one
//!    transaction: WATCH the tag's buckets, read their members, then
//!    MULTI; SADD each child its members; SET each bucket to the tombstone
//!    `urikey-moved LEVEL`; EXEC. A client's SADD between the read and EXEC
//!    aborts the transaction (WATCH), and the tag is moved again.
//!    Missing buckets get a tombstone too: a client that still writes the
//!    old level must never make a new set there.
//! 3. The meta's current level becomes LEVEL.
//!
//! A client writing the old level meanwhile gets WRONGTYPE from a moved
//! bucket and follows the tombstone; clients write the new level directly
//! only once step 3 is done, when every old bucket is a tombstone. So at
//! every moment a fingerprint's bucket is one set, and its one SADD
//! decides the claim.

use std::time::{Duration, Instant};

use redis::Value;

use super::client::RedisClient;
use super::error::RedisSetError;
use super::layout::{bits_for, Layout, MAX_BITS, TAG_BITS};
use super::meta::Meta;
use super::transport::Transport;
use super::url::RedisUrl;

/// Transactions retried on a tag before giving up (a client writing the
/// same bucket without pause).
const TAG_RETRIES: usize = 1000;

/// What a grow did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrowReport {
    /// The level moved from.
    pub from: u32,
    /// The level moved to.
    pub to: u32,
    /// Buckets moved (sets; missing ones got a tombstone only).
    pub moved: u64,
    /// Members moved.
    pub members: u64,
    /// Transactions retried because a client wrote meanwhile.
    pub retries: u64,
    /// How long it took.
    pub took: Duration,
}

/// Grows the set at `url` for `planned` keys (at least one level deeper).
///
/// # Errors
/// [`RedisSetError::NoSet`], [`RedisSetError::Unsupported`] (a plan the set
/// already has; another grow running to another level), connection
/// failures, [`RedisSetError::OutOfMemory`] (the grow stops; running it
/// again later finishes it).
pub fn grow(url: &RedisUrl, planned: u64) -> Result<GrowReport, RedisSetError> {
    let started = Instant::now();
    let mut c = RedisClient::connect(url)?;
    super::check_policy(&mut c)?;
    let name = url.name();
    let shown = url.shown().to_owned();
    let meta_key = format!("{name}:meta");
    let unsupported = |why: String| RedisSetError::Unsupported {
        url: shown.clone(),
        why,
    };
    // Step 1.
    let meta = update_meta(&mut c, name, |m| {
        let to = bits_for(planned).max(m.level() + 1);
        if to > MAX_BITS {
            return Err(unsupported(format!(
                "a set has at most 2^{MAX_BITS} buckets"
            )));
        }
        match m.growing {
            Some(g) if g != to && planned != 0 => Err(unsupported(format!(
                "a grow to level {g} is running (or was interrupted); run it again with the \
                 same plan ({} keys) to finish it",
                (1u64 << g) * super::PLANNED_MEAN
            ))),
            Some(_) => Ok(None),
            None => {
                let mut next = m.clone();
                next.growing = Some(to);
                next.planned = planned.max(m.planned);
                Ok(Some(next))
            }
        }
    })?;
    let from = meta.level();
    let to = meta.growing.expect("set above");
    let layout = Layout::new(name, meta.base);
    // Step 2.
    let mut report = GrowReport {
        from,
        to,
        moved: 0,
        members: 0,
        retries: 0,
        took: Duration::ZERO,
    };
    for tag in 0..(1u64 << TAG_BITS) {
        move_tag(&mut c, &layout, tag, from, to, &mut report)?;
    }
    // Step 3.
    update_meta(&mut c, name, |m| {
        if m.growing != Some(to) {
            return Err(RedisSetError::BadMeta {
                url: shown.clone(),
                key: meta_key.clone(),
                why: "it changed during the grow".to_owned(),
            });
        }
        let mut next = m.clone();
        next.growing = None;
        next.levels.push(to);
        Ok(Some(next))
    })?;
    report.took = started.elapsed();
    Ok(report)
}

/// Reads the meta under WATCH and writes what `change` makes of it (`None`:
/// leave it), again while another client changes it meanwhile; returns the
/// meta as left.
fn update_meta(
    c: &mut RedisClient,
    name: &str,
    mut change: impl FnMut(&Meta) -> Result<Option<Meta>, RedisSetError>,
) -> Result<Meta, RedisSetError> {
    let url = c.url().to_owned();
    let key = format!("{name}:meta");
    let fail =
        |e: redis::RedisError| RedisSetError::from_client(&url, "WATCH/MULTI on the meta", &e);
    for _ in 0..TAG_RETRIES {
        let con = c.con_for(&key)?;
        redis::cmd("WATCH").arg(&key).exec(con).map_err(fail)?;
        let text: Option<Vec<u8>> = redis::cmd("GET").arg(&key).query(con).map_err(fail)?;
        let Some(text) = text else {
            let _ = redis::cmd("UNWATCH").exec(con);
            return Err(RedisSetError::NoSet { url });
        };
        let meta = Meta::decode(&text).map_err(|why| RedisSetError::BadMeta {
            url: url.clone(),
            key: key.clone(),
            why,
        })?;
        meta.check_versions(&url)?;
        let next = match change(&meta) {
            Ok(Some(n)) => n,
            Ok(None) => {
                let _ = redis::cmd("UNWATCH").exec(c.con_for(&key)?);
                return Ok(meta);
            }
            Err(e) => {
                let _ = redis::cmd("UNWATCH").exec(c.con_for(&key)?);
                return Err(e);
            }
        };
        let con = c.con_for(&key)?;
        let done: Option<Value> = redis::pipe()
            .atomic()
            .cmd("SET")
            .arg(&key)
            .arg(next.encode())
            .ignore()
            .query(con)
            .map_err(fail)?;
        if done.is_some() {
            return Ok(next);
        }
    }
    Err(RedisSetError::Unsupported {
        url,
        why: "the meta kept changing under the grow".to_owned(),
    })
}

/// Moves the buckets of hash tag `tag` from level `from` to `to`.
fn move_tag(
    c: &mut RedisClient,
    layout: &Layout,
    tag: u64,
    from: u32,
    to: u32,
    report: &mut GrowReport,
) -> Result<(), RedisSetError> {
    let url = c.url().to_owned();
    let per_tag = 1u64 << (from - TAG_BITS);
    let keys: Vec<String> = (0..per_tag)
        .map(|low| layout.key(from, (tag << (from - TAG_BITS)) | low))
        .collect();
    let fail =
        |e: redis::RedisError| RedisSetError::from_client(&url, "the grow's transaction", &e);
    for _ in 0..TAG_RETRIES {
        let con = c.con_for(&keys[0])?;
        let mut watch = redis::cmd("WATCH");
        for k in &keys {
            watch.arg(k);
        }
        watch.exec(con).map_err(fail)?;
        // The type of each bucket, then the members of the sets.
        let mut types = redis::pipe();
        for k in &keys {
            types.cmd("TYPE").arg(k);
        }
        let kinds: Vec<String> = types.query(con).map_err(fail)?;
        let mut members_of = redis::pipe();
        let mut sets = Vec::new();
        for (k, kind) in keys.iter().zip(&kinds) {
            match kind.as_str() {
                "set" => {
                    members_of.cmd("SMEMBERS").arg(k);
                    sets.push(k.as_str());
                }
                "none" => {}
                "string" => {
                    let v: Option<Vec<u8>> = redis::cmd("GET").arg(k).query(con).map_err(fail)?;
                    if v.as_deref().and_then(Layout::parse_tombstone) != Some(to) {
                        let _ = redis::cmd("UNWATCH").exec(con);
                        return Err(RedisSetError::WrongType {
                            url: url.clone(),
                            key: k.clone(),
                        });
                    }
                }
                _ => {
                    let _ = redis::cmd("UNWATCH").exec(con);
                    return Err(RedisSetError::WrongType {
                        url: url.clone(),
                        key: k.clone(),
                    });
                }
            }
        }
        let members: Vec<Vec<i64>> = if sets.is_empty() {
            Vec::new()
        } else {
            members_of.query(con).map_err(fail)?
        };
        let mut tx = redis::pipe();
        tx.atomic();
        let mut moved = 0u64;
        let mut n = 0u64;
        let mut writes = 0;
        for (k, kind) in keys.iter().zip(&kinds) {
            if kind == "string" {
                continue;
            }
            if kind == "set" {
                let m = &members[sets.iter().position(|s| *s == k.as_str()).expect("listed")];
                let (_, bucket) = layout.parse_key(k).expect("our key");
                let mut children: Vec<(String, Vec<i64>)> = Vec::new();
                for &member in m {
                    let fp = layout.fingerprint(from, bucket, member);
                    let child = layout.key_of(fp, to);
                    match children.iter_mut().find(|(c, _)| *c == child) {
                        Some((_, v)) => v.push(member),
                        None => children.push((child, vec![member])),
                    }
                }
                for (child, v) in children {
                    tx.cmd("SADD").arg(child).arg(v).ignore();
                }
                moved += 1;
                n += m.len() as u64;
            }
            tx.cmd("SET").arg(k).arg(Layout::tombstone(to)).ignore();
            writes += 1;
        }
        if writes == 0 {
            let _ = redis::cmd("UNWATCH").exec(con);
            return Ok(());
        }
        let done: Option<Value> = match tx.query(con) {
            Ok(v) => v,
            Err(e) => {
                c.drop_con_for(&keys[0]);
                return Err(fail(e));
            }
        };
        if done.is_some() {
            report.moved += moved;
            report.members += n;
            return Ok(());
        }
        report.retries += 1;
    }
    Err(RedisSetError::Unsupported {
        url,
        why: format!("hash tag {tag:04x} kept changing under the grow"),
    })
}
