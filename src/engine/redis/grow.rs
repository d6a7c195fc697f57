//! Growing a set past its plan while clients write (`urikey state grow`):
//! every bucket of the current level is moved to the buckets of a deeper
//! level, so that no bucket passes 512 members (where Redis turns an intset
//! into a hash table of about 80 bytes a member).
//!
//! 1. The meta gets `growing LEVEL` (under WATCH: one grow at a time; a grow
//!    interrupted is finished by running it again).
//! 2. Each bucket is moved by one script (atomic; a bucket and its children
//!    share a hash tag, so one Cluster slot): the grow reads the bucket's
//!    members (SMEMBERS) and sends them, split by child, with their count;
//!    the script checks that the bucket still has that many members (a
//!    set only grows, so the same count is the same members), SADDs each
//!    child its members and SETs the bucket to the tombstone
//!    `urikey-moved LEVEL`. A client's SADD between the read and the script
//!    changes the count: the script does nothing and the bucket is read
//!    again. Thousands of buckets are read, then moved, in one pipeline.
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
use super::layout::{bits_for, Layout, MAX_BITS};
use super::meta::Meta;
use super::transport::Transport;
use super::url::RedisUrl;

/// Times the meta, or a bucket, is read and changed again before giving up
/// (a client writing the same key without pause).
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
    /// Bucket moves retried because a client wrote meanwhile.
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
    move_all(&mut c, &layout, from, to, &mut report)?;
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

/// The move of one bucket. KEYS: the bucket, then its children; ARGV: the
/// members the bucket had when read (a count), the tombstone, then for
/// each child its count of members and those members. Returns 0 when
/// moved, 1 when it was a tombstone already, -1 when the bucket changed
/// since it was read, -2 for a key of another type.
const MOVE_SCRIPT: &str = r"
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'string' then
  if redis.call('GET', KEYS[1]) == ARGV[2] then return 1 end
  return -2
elseif kind == 'set' then
  if redis.call('SCARD', KEYS[1]) ~= tonumber(ARGV[1]) then return -1 end
elseif kind == 'none' then
  if tonumber(ARGV[1]) ~= 0 then return -1 end
else
  return -2
end
local i = 3
for c = 2, #KEYS do
  local n = tonumber(ARGV[i])
  if n > 0 then redis.call('SADD', KEYS[c], unpack(ARGV, i + 1, i + n)) end
  i = i + 1 + n
end
redis.call('SET', KEYS[1], ARGV[2])
return 0
";

/// Buckets read and moved in one pipeline.
const MOVE_BATCH: u64 = 4096;

/// Moves the buckets of level `from` to level `to`.
fn move_all(
    c: &mut RedisClient,
    layout: &Layout,
    from: u32,
    to: u32,
    report: &mut GrowReport,
) -> Result<(), RedisSetError> {
    let url = c.url().to_owned();
    let sha = c.load_script(MOVE_SCRIPT)?;
    let tombstone = Layout::tombstone(to);
    let children = 1u64 << (to - from);
    let total = 1u64 << from;
    let mut start = 0u64;
    while start < total {
        let mut pending: Vec<u64> = (start..(start + MOVE_BATCH).min(total)).collect();
        for _ in 0..TAG_RETRIES {
            if pending.is_empty() {
                break;
            }
            let keys: Vec<String> = pending.iter().map(|&b| layout.key(from, b)).collect();
            let reads: Vec<(String, Vec<Vec<u8>>)> = keys
                .iter()
                .map(|k| (k.clone(), vec![b"SMEMBERS".to_vec(), k.as_bytes().to_vec()]))
                .collect();
            let members = c.pipeline_raw(&reads)?;
            let mut moves = Vec::with_capacity(keys.len());
            let mut counts = Vec::with_capacity(keys.len());
            for ((&bucket, key), read) in pending.iter().zip(&keys).zip(members) {
                let m: Vec<i64> = match read {
                    Value::Array(items) | Value::Set(items) => items
                        .into_iter()
                        .filter_map(|v| match v {
                            Value::BulkString(b) => std::str::from_utf8(&b).ok()?.parse().ok(),
                            Value::Int(n) => Some(n),
                            _ => None,
                        })
                        .collect(),
                    // A tombstone (WRONGTYPE): the script says whose.
                    _ => Vec::new(),
                };
                let mut per_child: Vec<Vec<i64>> = vec![Vec::new(); children as usize];
                for &member in &m {
                    let fp = layout.fingerprint(from, bucket, member);
                    let child = Layout::bucket(fp, to) - (bucket << (to - from));
                    per_child[child as usize].push(member);
                }
                let mut args: Vec<Vec<u8>> = vec![
                    b"EVALSHA".to_vec(),
                    sha.as_bytes().to_vec(),
                    (1 + children).to_string().into_bytes(),
                    key.as_bytes().to_vec(),
                ];
                for child in 0..children {
                    args.push(layout.key(to, (bucket << (to - from)) | child).into_bytes());
                }
                args.push(m.len().to_string().into_bytes());
                args.push(tombstone.clone().into_bytes());
                for v in &per_child {
                    args.push(v.len().to_string().into_bytes());
                    args.extend(v.iter().map(|x| x.to_string().into_bytes()));
                }
                moves.push((key.clone(), args));
                counts.push(m.len() as u64);
            }
            let done = c.pipeline_raw(&moves)?;
            let mut again = Vec::new();
            for ((&bucket, key), (r, n)) in
                pending.iter().zip(&keys).zip(done.into_iter().zip(counts))
            {
                match r {
                    Value::Int(0) => {
                        if n > 0 {
                            report.moved += 1;
                            report.members += n;
                        }
                    }
                    Value::Int(1) => {}
                    Value::Int(-1) => {
                        report.retries += 1;
                        again.push(bucket);
                    }
                    Value::Int(_) => {
                        return Err(RedisSetError::WrongType {
                            url: url.clone(),
                            key: key.clone(),
                        })
                    }
                    Value::ServerError(e) => {
                        return Err(RedisSetError::from_reply(
                            &url,
                            "the grow's move script",
                            e.code(),
                            &format!("{} {}", e.code(), e.details().unwrap_or("")),
                        ))
                    }
                    other => {
                        return Err(RedisSetError::Server {
                            url: url.clone(),
                            command: "the grow's move script".to_owned(),
                            why: format!("an unexpected reply {other:?}"),
                        })
                    }
                }
            }
            pending = again;
        }
        if !pending.is_empty() {
            return Err(RedisSetError::Unsupported {
                url,
                why: "buckets kept changing under the grow".to_owned(),
            });
        }
        start += MOVE_BATCH;
    }
    Ok(())
}
