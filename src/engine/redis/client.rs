//! Our own client: the redis crate's blocking connections, one to a node,
//! with batches pipelined (written whole to every node, then the replies
//! read), and the slots of a Redis Cluster mapped to its masters (the
//! crate's `Slot::for_key` hashes a key). A MOVED or ASK reply (a resharding)
//! reloads the map and sends the command again.

use std::time::Duration;

use redis::Value;

use super::error::RedisSetError;
use super::transport::{info_field, Op, Reply, Transport};
use super::url::RedisUrl;

/// Commands written to a node before its replies are read: enough to keep
/// Redis busy, few enough that neither side buffers much (about 40 bytes a
/// command each way).
const PIPELINE: usize = 8192;

/// How long to wait for a connection and for a reply.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const REPLY_TIMEOUT: Duration = Duration::from_secs(60);

/// Slots of a Redis Cluster.
const SLOTS: usize = 16384;

/// Times a command redirected (MOVED, ASK, TRYAGAIN) is sent again.
const REDIRECTS: usize = 8;

/// A node and its connection (`None` once it failed: made again at the next
/// call).
struct Node {
    addr: String,
    url: url::Url,
    con: Option<redis::Connection>,
}

/// A connection to a Redis server or to every master of a Redis Cluster.
pub struct RedisClient {
    url: RedisUrl,
    nodes: Vec<Node>,
    /// The node of each slot (a cluster), empty for one server.
    slots: Vec<u16>,
}

impl std::fmt::Debug for RedisClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisClient")
            .field("url", &self.url.shown())
            .field(
                "nodes",
                &self.nodes.iter().map(|n| &n.addr).collect::<Vec<_>>(),
            )
            .finish()
    }
}

fn connect(shown: &str, url: &url::Url) -> Result<redis::Connection, RedisSetError> {
    let client = redis::Client::open(url.as_str())
        .map_err(|e| RedisSetError::from_client(shown, "connect", &e))?;
    let con = client
        .get_connection_with_timeout(CONNECT_TIMEOUT)
        .map_err(|e| RedisSetError::from_client(shown, "connect", &e))?;
    con.set_read_timeout(Some(REPLY_TIMEOUT))
        .and_then(|()| con.set_write_timeout(Some(REPLY_TIMEOUT)))
        .map_err(|e| RedisSetError::from_client(shown, "connect", &e))?;
    Ok(con)
}

/// The Cluster slot of `key`: CRC16 of its hash tag (what is between the
/// first `{` and the next `}`, when not empty) or of the whole key.
fn slot(key: &[u8]) -> usize {
    let tagged = key.iter().position(|&b| b == b'{').and_then(|open| {
        let rest = &key[open + 1..];
        let close = rest.iter().position(|&b| b == b'}')?;
        (close > 0).then(|| &rest[..close])
    });
    let hashed = tagged.unwrap_or(key);
    usize::from(crc16::State::<crc16::XMODEM>::calculate(hashed)) % SLOTS
}

/// `op` appended to `buf`.
fn encode_op(buf: &mut Vec<u8>, op: &Op<'_>) {
    let (name, key, members): (&[u8], &str, &[i64]) = match op {
        Op::Add { key, members } => (b"SADD", key, members),
        // Most lookups are of one member: an integer reply is read in
        // about half the time of an array of one.
        Op::Contains { key, members } if members.len() == 1 => (b"SISMEMBER", key, members),
        Op::Contains { key, members } => (b"SMISMEMBER", key, members),
        Op::Get { key } => (b"GET", key, &[]),
        Op::Members { key } => (b"SMEMBERS", key, &[]),
        Op::Card { key } => (b"SCARD", key, &[]),
    };
    let mut n = itoa::Buffer::new();
    buf.push(b'*');
    buf.extend_from_slice(n.format(2 + members.len()).as_bytes());
    buf.extend_from_slice(b"\r\n");
    for p in [name, key.as_bytes()] {
        buf.push(b'$');
        buf.extend_from_slice(n.format(p.len()).as_bytes());
        buf.extend_from_slice(b"\r\n");
        buf.extend_from_slice(p);
        buf.extend_from_slice(b"\r\n");
    }
    let mut m = itoa::Buffer::new();
    for &member in members {
        let text = m.format(member).as_bytes();
        buf.push(b'$');
        buf.extend_from_slice(n.format(text.len()).as_bytes());
        buf.extend_from_slice(b"\r\n");
        buf.extend_from_slice(text);
        buf.extend_from_slice(b"\r\n");
    }
}

/// The reply to `op` from the crate's value.
fn reply(op: &Op<'_>, v: Value) -> Reply {
    match v {
        Value::ServerError(e) => Reply::Error {
            code: e.code().to_owned(),
            message: match e.details() {
                Some(d) => format!("{} {d}", e.code()),
                None => e.code().to_owned(),
            },
        },
        Value::Int(n) => Reply::Int(n),
        Value::Nil => Reply::Value(None),
        Value::BulkString(b) => match op {
            Op::Get { .. } => Reply::Value(Some(b)),
            _ => Reply::Error {
                code: "PROTOCOL".to_owned(),
                message: "a string where an integer was expected".to_owned(),
            },
        },
        Value::Array(items) | Value::Set(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                let n = match item {
                    Value::Int(n) => Some(n),
                    Value::BulkString(b) => {
                        std::str::from_utf8(&b).ok().and_then(|s| s.parse().ok())
                    }
                    _ => None,
                };
                match n {
                    Some(n) => out.push(n),
                    None => {
                        return Reply::Error {
                            code: "NOTOURS".to_owned(),
                            message: "a member that is not a 64-bit integer".to_owned(),
                        }
                    }
                }
            }
            Reply::Ints(out)
        }
        other => Reply::Error {
            code: "PROTOCOL".to_owned(),
            message: format!("an unexpected reply {other:?}"),
        },
    }
}

impl RedisClient {
    /// Connects to the server of `url`, and to every master when it is a
    /// node of a cluster.
    ///
    /// # Errors
    /// [`RedisSetError::Connection`], [`RedisSetError::Auth`].
    pub fn connect(url: &RedisUrl) -> Result<Self, RedisSetError> {
        let con = connect(url.shown(), url.connect())?;
        let host = url.connect().host_str().unwrap_or("").to_owned();
        let port = url.connect().port().unwrap_or(6379);
        let mut me = Self {
            url: url.clone(),
            nodes: vec![Node {
                addr: format!("{host}:{port}"),
                url: url.connect().clone(),
                con: Some(con),
            }],
            slots: Vec::new(),
        };
        let info = me.command_on(0, &["INFO", "cluster"])?;
        let text = match info {
            Value::BulkString(b) => String::from_utf8_lossy(&b).into_owned(),
            Value::VerbatimString { text, .. } => text,
            _ => String::new(),
        };
        if info_field(&text, "cluster_enabled") == Some("1") {
            me.load_slots()?;
        }
        Ok(me)
    }

    /// True for a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        !self.slots.is_empty()
    }

    /// The masters' addresses.
    pub fn nodes(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.addr.clone()).collect()
    }

    /// The connection to node `i`, made again if it failed before.
    fn con(&mut self, i: usize) -> Result<&mut redis::Connection, RedisSetError> {
        let shown = self.url.shown().to_owned();
        let node = &mut self.nodes[i];
        if node.con.is_none() {
            node.con = Some(connect(&shown, &node.url)?);
        }
        Ok(node.con.as_mut().expect("made above"))
    }

    /// Runs one command on node `i`.
    fn command_on(&mut self, i: usize, parts: &[&str]) -> Result<Value, RedisSetError> {
        let shown = self.url.shown().to_owned();
        let mut cmd = redis::cmd(parts[0]);
        for p in &parts[1..] {
            cmd.arg(*p);
        }
        let con = self.con(i)?;
        match cmd.query::<Value>(con) {
            Ok(v) => Ok(v),
            Err(e) => {
                let err = RedisSetError::from_client(&shown, parts[0], &e);
                if err.is_connection() {
                    self.nodes[i].con = None;
                }
                Err(err)
            }
        }
    }

    /// Reads the cluster's slot map (`CLUSTER SLOTS`) and connects to every
    /// master.
    fn load_slots(&mut self) -> Result<(), RedisSetError> {
        let shown = self.url.shown().to_owned();
        let bad = |why: &str| RedisSetError::Server {
            url: shown.clone(),
            command: "CLUSTER SLOTS".to_owned(),
            why: why.to_owned(),
        };
        let first = (0..self.nodes.len())
            .find(|&i| self.nodes[i].con.is_some())
            .unwrap_or(0);
        let v = self.command_on(first, &["CLUSTER", "SLOTS"])?;
        let Value::Array(ranges) = v else {
            return Err(bad("not an array"));
        };
        let default_host = self.nodes[first]
            .url
            .host_str()
            .unwrap_or("127.0.0.1")
            .to_owned();
        let mut slots = vec![u16::MAX; SLOTS];
        let mut masters: Vec<(String, u16)> = Vec::new();
        for r in ranges {
            let Value::Array(r) = r else {
                return Err(bad("a range that is not an array"));
            };
            let (Some(Value::Int(start)), Some(Value::Int(end)), Some(Value::Array(node))) =
                (r.first(), r.get(1), r.get(2))
            else {
                return Err(bad("a range without start, end and master"));
            };
            let host = match node.first() {
                Some(Value::BulkString(h)) if !h.is_empty() && h != b"?" => {
                    String::from_utf8_lossy(h).into_owned()
                }
                _ => default_host.clone(),
            };
            let Some(Value::Int(port)) = node.get(1) else {
                return Err(bad("a master without a port"));
            };
            let port = u16::try_from(*port).map_err(|_| bad("a port out of range"))?;
            let i = match masters.iter().position(|m| *m == (host.clone(), port)) {
                Some(i) => i,
                None => {
                    masters.push((host, port));
                    masters.len() - 1
                }
            };
            let (start, end) = (*start as usize, *end as usize);
            if start > end || end >= SLOTS {
                return Err(bad("a slot out of range"));
            }
            for s in &mut slots[start..=end] {
                *s = i as u16;
            }
        }
        if slots.contains(&u16::MAX) {
            return Err(bad("some slots have no master (is the cluster complete?)"));
        }
        let mut old: Vec<Node> = std::mem::take(&mut self.nodes);
        for (host, port) in masters {
            let addr = format!("{host}:{port}");
            let node = match old.iter().position(|n| n.addr == addr) {
                Some(i) => old.swap_remove(i),
                None => Node {
                    url: self.url.for_node(&host, port)?,
                    addr,
                    con: None,
                },
            };
            self.nodes.push(node);
        }
        for i in 0..self.nodes.len() {
            self.con(i)?;
        }
        self.slots = slots;
        Ok(())
    }

    /// The node holding `key`.
    pub(crate) fn node_of(&self, key: &str) -> usize {
        if self.slots.is_empty() {
            0
        } else {
            self.slots[slot(key.as_bytes())] as usize
        }
    }

    /// The connection to the node holding `key`, for a transaction on keys
    /// of one slot.
    ///
    /// # Errors
    /// [`RedisSetError::Connection`].
    pub(crate) fn con_for(&mut self, key: &str) -> Result<&mut redis::Connection, RedisSetError> {
        let i = self.node_of(key);
        self.con(i)
    }

    /// Loads `script` on every master; returns its SHA1.
    ///
    /// # Errors
    /// Connection failures, an error reply (scripts disabled).
    pub(crate) fn load_script(&mut self, script: &str) -> Result<String, RedisSetError> {
        let mut sha = String::new();
        for i in 0..self.nodes.len() {
            match self.command_on(i, &["SCRIPT", "LOAD", script])? {
                Value::BulkString(b) => sha = String::from_utf8_lossy(&b).into_owned(),
                Value::ServerError(e) => {
                    return Err(RedisSetError::from_reply(
                        self.url.shown(),
                        "SCRIPT LOAD",
                        e.code(),
                        &format!("{} {}", e.code(), e.details().unwrap_or("")),
                    ))
                }
                other => {
                    return Err(RedisSetError::Server {
                        url: self.url.shown().to_owned(),
                        command: "SCRIPT LOAD".to_owned(),
                        why: format!("an unexpected reply {other:?}"),
                    })
                }
            }
        }
        Ok(sha)
    }

    /// Runs raw commands, each routed by its key, pipelined per node;
    /// replies in order (error replies as `Value::ServerError`).
    ///
    /// # Errors
    /// Connection failures.
    pub(crate) fn pipeline_raw(
        &mut self,
        cmds: &[(String, Vec<Vec<u8>>)],
    ) -> Result<Vec<Value>, RedisSetError> {
        let shown = self.url.shown().to_owned();
        let mut per_node: Vec<Vec<usize>> = vec![Vec::new(); self.nodes.len()];
        for (i, (key, _)) in cmds.iter().enumerate() {
            per_node[self.node_of(key)].push(i);
        }
        let mut out: Vec<Value> = vec![Value::Nil; cmds.len()];
        let mut buf = Vec::new();
        let mut n = itoa::Buffer::new();
        for (node, idx) in per_node.iter().enumerate() {
            if idx.is_empty() {
                continue;
            }
            buf.clear();
            for &i in idx {
                let parts = &cmds[i].1;
                buf.push(b'*');
                buf.extend_from_slice(n.format(parts.len()).as_bytes());
                buf.extend_from_slice(b"\r\n");
                for p in parts {
                    buf.push(b'$');
                    buf.extend_from_slice(n.format(p.len()).as_bytes());
                    buf.extend_from_slice(b"\r\n");
                    buf.extend_from_slice(p);
                    buf.extend_from_slice(b"\r\n");
                }
            }
            if let Err(e) = self.con(node)?.send_packed_command(&buf) {
                self.nodes[node].con = None;
                return Err(RedisSetError::from_client(&shown, "a pipeline", &e));
            }
        }
        for (node, idx) in per_node.iter().enumerate() {
            for &i in idx {
                match self.con(node)?.recv_response() {
                    Ok(v) => out[i] = v,
                    Err(e) => {
                        self.nodes[node].con = None;
                        return Err(RedisSetError::from_client(&shown, "a pipeline", &e));
                    }
                }
            }
        }
        Ok(out)
    }

    /// Runs `ops` on their nodes, replies in order, redirections left in.
    fn run_once(&mut self, ops: &[Op<'_>], out: &mut [Option<Reply>]) -> Result<(), RedisSetError> {
        let shown = self.url.shown().to_owned();
        let mut per_node: Vec<Vec<usize>> = vec![Vec::new(); self.nodes.len()];
        for (i, op) in ops.iter().enumerate() {
            per_node[self.node_of(op.key())].push(i);
        }
        let rounds = per_node
            .iter()
            .map(|v| v.len().div_ceil(PIPELINE))
            .max()
            .unwrap_or(0);
        let mut buf = Vec::new();
        for round in 0..rounds {
            // Written to every node, then read from every node.
            for (node, idx) in per_node.iter().enumerate() {
                let chunk = idx.chunks(PIPELINE).nth(round).unwrap_or(&[]);
                if chunk.is_empty() {
                    continue;
                }
                buf.clear();
                for &i in chunk {
                    encode_op(&mut buf, &ops[i]);
                }
                let sent = self.con(node)?.send_packed_command(&buf);
                if let Err(e) = sent {
                    self.nodes[node].con = None;
                    return Err(RedisSetError::from_client(&shown, ops[chunk[0]].name(), &e));
                }
            }
            for (node, idx) in per_node.iter().enumerate() {
                let chunk = idx.chunks(PIPELINE).nth(round).unwrap_or(&[]);
                for &i in chunk {
                    let got = self.con(node)?.recv_response();
                    match got {
                        Ok(v) => out[i] = Some(reply(&ops[i], v)),
                        Err(e) => {
                            self.nodes[node].con = None;
                            return Err(RedisSetError::from_client(&shown, ops[i].name(), &e));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

impl Transport for RedisClient {
    fn url(&self) -> &str {
        self.url.shown()
    }

    fn run(&mut self, ops: &[Op<'_>]) -> Result<Vec<Reply>, RedisSetError> {
        let mut out: Vec<Option<Reply>> = vec![None; ops.len()];
        self.run_once(ops, &mut out)?;
        for attempt in 0..REDIRECTS {
            let redirected: Vec<usize> = (0..ops.len())
                .filter(|&i| {
                    matches!(&out[i], Some(Reply::Error { code, .. })
                        if matches!(code.as_str(), "MOVED" | "ASK" | "TRYAGAIN" | "CLUSTERDOWN"))
                })
                .collect();
            if redirected.is_empty() || !self.is_cluster() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20 << attempt.min(4)));
            self.load_slots()?;
            let again: Vec<Op<'_>> = redirected.iter().map(|&i| ops[i]).collect();
            let mut replies = vec![None; again.len()];
            self.run_once(&again, &mut replies)?;
            for (&i, r) in redirected.iter().zip(replies) {
                out[i] = r;
            }
        }
        Ok(out
            .into_iter()
            .map(|r| r.expect("every op has a reply"))
            .collect())
    }

    fn set_string(&mut self, key: &str, value: &str, nx: bool) -> Result<bool, RedisSetError> {
        let i = self.node_of(key);
        let mut parts = vec!["SET", key, value];
        if nx {
            parts.push("NX");
        }
        match self.command_on(i, &parts)? {
            Value::Okay => Ok(true),
            Value::SimpleString(s) if s == "OK" => Ok(true),
            Value::Nil => Ok(false),
            Value::ServerError(e) => Err(RedisSetError::from_reply(
                self.url.shown(),
                "SET",
                e.code(),
                &format!("{} {}", e.code(), e.details().unwrap_or("")),
            )),
            other => Err(RedisSetError::Server {
                url: self.url.shown().to_owned(),
                command: "SET".to_owned(),
                why: format!("an unexpected reply {other:?}"),
            }),
        }
    }

    fn info(&mut self, section: &str) -> Result<Vec<(String, String)>, RedisSetError> {
        let mut out = Vec::new();
        for i in 0..self.nodes.len() {
            let text = match self.command_on(i, &["INFO", section])? {
                Value::BulkString(b) => String::from_utf8_lossy(&b).into_owned(),
                Value::VerbatimString { text, .. } => text,
                other => format!("{other:?}"),
            };
            out.push((self.nodes[i].addr.clone(), text));
        }
        Ok(out)
    }

    fn reconnect(&self) -> Option<Result<Box<dyn Transport>, RedisSetError>> {
        Some(RedisClient::connect(&self.url).map(|c| Box::new(c) as Box<dyn Transport>))
    }

    fn set_keys(&mut self, pattern: &str) -> Result<Vec<String>, RedisSetError> {
        let mut keys = Vec::new();
        for i in 0..self.nodes.len() {
            let mut cursor = "0".to_owned();
            loop {
                let v = self.command_on(
                    i,
                    &[
                        "SCAN", &cursor, "MATCH", pattern, "COUNT", "10000", "TYPE", "set",
                    ],
                )?;
                let Value::Array(parts) = v else {
                    return Err(RedisSetError::Server {
                        url: self.url.shown().to_owned(),
                        command: "SCAN".to_owned(),
                        why: format!("an unexpected reply {v:?}"),
                    });
                };
                let mut parts = parts.into_iter();
                if let Some(Value::BulkString(c)) = parts.next() {
                    cursor = String::from_utf8_lossy(&c).into_owned();
                }
                if let Some(Value::Array(found)) = parts.next() {
                    for k in found {
                        if let Value::BulkString(k) = k {
                            keys.push(String::from_utf8_lossy(&k).into_owned());
                        }
                    }
                }
                if cursor == "0" {
                    break;
                }
            }
        }
        // A resharding may show a key on two nodes.
        keys.sort_unstable();
        keys.dedup();
        Ok(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_commands_are_encoded_as_resp() {
        let mut buf = Vec::new();
        encode_op(&mut buf, &Op::Get { key: "k" });
        assert_eq!(buf, b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
        buf.clear();
        encode_op(
            &mut buf,
            &Op::Contains {
                key: "a",
                members: &[5],
            },
        );
        assert_eq!(buf, b"*3\r\n$9\r\nSISMEMBER\r\n$1\r\na\r\n$1\r\n5\r\n");
        buf.clear();
        encode_op(
            &mut buf,
            &Op::Add {
                key: "a",
                members: &[-12, 7],
            },
        );
        assert_eq!(
            buf,
            b"*4\r\n$4\r\nSADD\r\n$1\r\na\r\n$3\r\n-12\r\n$1\r\n7\r\n"
        );
    }

    #[test]
    fn redis_cluster_slots_follow_the_hash_tag() {
        // The examples of the Redis Cluster specification's key hashing.
        assert_eq!(slot(b"123456789"), 0x31c3 % SLOTS);
        assert_eq!(slot(b"{user1000}.following"), slot(b"user1000"));
        assert_eq!(slot(b"foo{}{bar}"), slot(b"foo{}{bar}"));
        assert_ne!(slot(b"foo{}{bar}"), slot(b"bar"));
        assert_eq!(slot(b"foo{{bar}}zap"), slot(b"{bar"));
        assert_eq!(slot(b"u:19:{3fa1}5"), slot(b"u:16:{3fa1}"));
    }
}
