//! What the set asks of a Redis connection: batches of set commands,
//! pipelined (per node on a cluster), and a few commands on the meta and the
//! nodes. Our own client ([`super::RedisClient`]) is one; the Python
//! extension adds a redis-py client, so a crawler's connection is reused.

use super::error::RedisSetError;

/// One command of a batch.
#[derive(Clone, Copy, Debug)]
pub enum Op<'a> {
    /// `SADD key members...`: [`Reply::Int`], the members added.
    Add {
        /// The bucket.
        key: &'a str,
        /// The members.
        members: &'a [i64],
    },
    /// `SMISMEMBER key members...`: [`Reply::Ints`], 1 for each held; a
    /// transport may send one member as `SISMEMBER` and answer
    /// [`Reply::Int`].
    Contains {
        /// The bucket.
        key: &'a str,
        /// The members.
        members: &'a [i64],
    },
    /// `GET key`: [`Reply::Value`].
    Get {
        /// The key.
        key: &'a str,
    },
    /// `SMEMBERS key`: [`Reply::Ints`].
    Members {
        /// The bucket.
        key: &'a str,
    },
    /// `SCARD key`: [`Reply::Int`].
    Card {
        /// The bucket.
        key: &'a str,
    },
}

impl Op<'_> {
    /// The key the command is on.
    pub fn key(&self) -> &str {
        match self {
            Op::Add { key, .. }
            | Op::Contains { key, .. }
            | Op::Get { key }
            | Op::Members { key }
            | Op::Card { key } => key,
        }
    }

    /// The command's name.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Add { .. } => "SADD",
            Op::Contains { .. } => "SMISMEMBER",
            Op::Get { .. } => "GET",
            Op::Members { .. } => "SMEMBERS",
            Op::Card { .. } => "SCARD",
        }
    }
}

/// The answer to one [`Op`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// An integer.
    Int(i64),
    /// Integers (SMISMEMBER's flags, SMEMBERS's members).
    Ints(Vec<i64>),
    /// A string value, `None` for a missing key.
    Value(Option<Vec<u8>>),
    /// An error reply: its code (`WRONGTYPE`, `OOM`, `MOVED`...) and text.
    Error {
        /// The first word.
        code: String,
        /// The whole message.
        message: String,
    },
}

impl Reply {
    /// True for a WRONGTYPE error.
    pub fn is_wrong_type(&self) -> bool {
        matches!(self, Reply::Error { code, .. } if code == "WRONGTYPE")
    }
}

/// A connection to the Redis (or the Redis Cluster) holding a set.
pub trait Transport: Send + std::fmt::Debug {
    /// The set's URL without its password.
    fn url(&self) -> &str;

    /// Runs `ops`, pipelined, and returns their replies in order; error
    /// replies are [`Reply::Error`]s.
    ///
    /// # Errors
    /// A failure of the connection.
    fn run(&mut self, ops: &[Op<'_>]) -> Result<Vec<Reply>, RedisSetError>;

    /// `SET key value` (`NX`: only when missing); true when set.
    ///
    /// # Errors
    /// A failure of the connection or an error reply.
    fn set_string(&mut self, key: &str, value: &str, nx: bool) -> Result<bool, RedisSetError>;

    /// `INFO section` of every master node, as `(node, text)`.
    ///
    /// # Errors
    /// A failure of the connection or an error reply.
    fn info(&mut self, section: &str) -> Result<Vec<(String, String)>, RedisSetError>;

    /// Every SET key matching `pattern` (`SCAN MATCH pattern TYPE set` on
    /// every master).
    ///
    /// # Errors
    /// A failure of the connection or an error reply.
    fn set_keys(&mut self, pattern: &str) -> Result<Vec<String>, RedisSetError>;

    /// Another connection to the same Redis, for a thread of its own;
    /// `None` when the transport cannot make one (a client it was given).
    ///
    /// # Errors
    /// A failure to connect.
    fn reconnect(&self) -> Option<Result<Box<dyn Transport>, RedisSetError>> {
        None
    }
}

/// The value of `field` in the text of `INFO`.
pub fn info_field<'a>(text: &'a str, field: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        l.strip_prefix(field)
            .and_then(|r| r.strip_prefix(':'))
            .map(str::trim)
    })
}
