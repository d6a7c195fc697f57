//! Why a Redis seen-set cannot be opened, read or added to. Every message
//! names the set by its URL without the password (see [`super::RedisUrl`])
//! and says what to do.

use std::fmt;

/// An error of a [`RedisSeenSet`](super::RedisSeenSet).
#[derive(Debug)]
#[non_exhaustive]
pub enum RedisSetError {
    /// The URL does not name a Redis set (`redis://HOST:PORT/DB?name=NAME`).
    Url {
        /// The URL as given, password removed.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// Redis could not be reached, or the connection failed (a refused
    /// connection, a timeout, a closed socket).
    Connection {
        /// The set.
        url: String,
        /// What the client said.
        why: String,
    },
    /// Redis refused the credentials (a wrong password or user).
    Auth {
        /// The set.
        url: String,
        /// What Redis said.
        why: String,
    },
    /// A key of the set's name holds a value of another type than the set
    /// keeps there (another program uses the name).
    WrongType {
        /// The set.
        url: String,
        /// The key.
        key: String,
    },
    /// Redis is out of memory (`maxmemory` reached under `noeviction`):
    /// the write was refused, nothing already in the set is lost.
    OutOfMemory {
        /// The set.
        url: String,
        /// What Redis said.
        why: String,
    },
    /// Redis evicts keys when full (`maxmemory-policy` of `allkeys-*`):
    /// it would silently forget fingerprints.
    EvictingPolicy {
        /// The set.
        url: String,
        /// The node whose policy it is.
        node: String,
        /// The policy.
        policy: String,
    },
    /// No set of that name exists, and it was not to be made.
    NoSet {
        /// The set.
        url: String,
    },
    /// `init` found a set of that name.
    Exists {
        /// The set.
        url: String,
    },
    /// The set holds keys of another key configuration.
    ConfigMismatch {
        /// The set.
        url: String,
        /// The set's configuration (as written at `init`) and what only it has.
        set: String,
        /// The configuration asked for, and what only it has.
        asked: String,
    },
    /// The set was made with another key version or layout version.
    Version {
        /// The set.
        url: String,
        /// What differs: `key version 1` or `layout 2`.
        set: String,
        /// This build's.
        current: String,
        /// The set's configuration, for the rebuild command.
        config: String,
    },
    /// The meta key does not hold what a set's meta holds.
    BadMeta {
        /// The set.
        url: String,
        /// The key.
        key: String,
        /// What is wrong.
        why: String,
    },
    /// Any other error reply.
    Server {
        /// The set.
        url: String,
        /// The command that failed.
        command: String,
        /// What Redis said.
        why: String,
    },
    /// Something this kind of set cannot do.
    Unsupported {
        /// The set.
        url: String,
        /// What and why not.
        why: String,
    },
}

impl RedisSetError {
    /// True for a failure to reach Redis (nothing was learnt about the set).
    pub fn is_connection(&self) -> bool {
        matches!(self, RedisSetError::Connection { .. })
    }

    /// An error of `url` from the client's error `e` in `command`.
    pub(crate) fn from_client(url: &str, command: &str, e: &redis::RedisError) -> Self {
        let url = url.to_owned();
        let why = e.to_string();
        let code = e.code().unwrap_or("");
        if e.is_io_error()
            || e.is_connection_refusal()
            || e.is_timeout()
            || e.is_connection_dropped()
        {
            return RedisSetError::Connection { url, why };
        }
        if code == "WRONGPASS" || code == "NOAUTH" || why.contains("WRONGPASS") {
            return RedisSetError::Auth { url, why };
        }
        match e.kind() {
            redis::ErrorKind::AuthenticationFailed => RedisSetError::Auth { url, why },
            _ => Self::from_reply(&url, command, code, &why),
        }
    }

    /// An error of `url` from an error reply of `command` (`code` is its
    /// first word: `OOM`, `WRONGPASS`...).
    pub fn from_reply(url: &str, command: &str, code: &str, message: &str) -> Self {
        let url = url.to_owned();
        let why = message.to_owned();
        match code {
            "OOM" => RedisSetError::OutOfMemory { url, why },
            "WRONGPASS" | "NOAUTH" => RedisSetError::Auth { url, why },
            _ => RedisSetError::Server {
                url,
                command: command.to_owned(),
                why,
            },
        }
    }
}

impl fmt::Display for RedisSetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RedisSetError::Url { url, why } => write!(f, "{url} is not a Redis set URL: {why}"),
            RedisSetError::Connection { url, why } => write!(
                f,
                "Redis set {url}: cannot reach Redis ({why}); nothing was added or lost"
            ),
            RedisSetError::Auth { url, why } => write!(
                f,
                "Redis set {url}: Redis refused the credentials ({why}); give the user and \
                 password in the URL (redis://USER:PASSWORD@HOST:PORT/DB)"
            ),
            RedisSetError::WrongType { url, key } => write!(
                f,
                "Redis set {url}: key `{key}` holds a value of another type than this set keeps \
                 there (another program uses the name?); choose another name (?name=...)"
            ),
            RedisSetError::OutOfMemory { url, why } => write!(
                f,
                "Redis set {url}: Redis is out of memory ({why}): the keys were not all added; \
                 nothing already in the set is lost. Give Redis more memory (maxmemory) or \
                 another node, then run again"
            ),
            RedisSetError::EvictingPolicy { url, node, policy } => write!(
                f,
                "Redis set {url}: node {node} has maxmemory-policy {policy}, which evicts keys \
                 when memory is full: the set would silently forget fingerprints and report \
                 seen URLs as new. Use noeviction (a full Redis then refuses writes, and \
                 nothing is forgotten)"
            ),
            RedisSetError::NoSet { url } => write!(f, "Redis set {url} does not exist"),
            RedisSetError::Exists { url } => write!(
                f,
                "Redis set {url} already exists: a new set needs a new name (?name=...)"
            ),
            RedisSetError::ConfigMismatch { url, set, asked } => write!(
                f,
                "Redis set {url} holds keys of {set}, not of {asked}: mixing keys would \
                 silently break deduplication; use the set's options, or another name"
            ),
            RedisSetError::Version {
                url,
                set,
                current,
                config,
            } => write!(
                f,
                "Redis set {url} was made with {set}, and this urikey uses {current}: its \
                 fingerprints are not this build's. Rebuild it under a new name from the \
                 inputs it was fed, as a set of the configuration `{config}`"
            ),
            RedisSetError::BadMeta { url, key, why } => write!(
                f,
                "Redis set {url}: key `{key}` is not the meta of a urikey set ({why}); nothing \
                 was read from it"
            ),
            RedisSetError::Server { url, command, why } => {
                write!(f, "Redis set {url}: {command} failed: {why}")
            }
            RedisSetError::Unsupported { url, why } => write!(f, "Redis set {url}: {why}"),
        }
    }
}

impl std::error::Error for RedisSetError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_error_messages_name_the_set_and_the_way_out() {
        let e = RedisSetError::from_reply("redis://h:1/0?name=x", "SADD", "OOM", "OOM command");
        assert!(matches!(e, RedisSetError::OutOfMemory { .. }));
        assert!(e.to_string().contains("redis://h:1/0?name=x"), "{e}");
        let e = RedisSetError::EvictingPolicy {
            url: "u".into(),
            node: "n".into(),
            policy: "allkeys-lru".into(),
        };
        assert!(e.to_string().contains("noeviction"), "{e}");
    }
}
