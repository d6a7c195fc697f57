//! The URL of a Redis seen-set: `redis://[USER:PASSWORD@]HOST[:PORT][/DB][?name=NAME]`.
//! The name (default `urikey`) is ours; the rest is the redis crate's.

use super::error::RedisSetError;

/// The name of a set when the URL gives none.
pub const DEFAULT_NAME: &str = "urikey";

/// A parsed set URL.
#[derive(Clone)]
pub struct RedisUrl {
    /// What the client connects to (the URL without `name`).
    connect: url::Url,
    /// The URL as shown in messages: no password.
    shown: String,
    /// The set's name: the prefix of its keys.
    name: String,
}

impl std::fmt::Debug for RedisUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisUrl")
            .field("url", &self.shown)
            .finish()
    }
}

/// True when `s` is meant as a Redis set rather than a directory.
pub fn is_redis_url(s: &str) -> bool {
    let lower = s.get(..10).unwrap_or(s).to_ascii_lowercase();
    lower.starts_with("redis://") || lower.starts_with("rediss://")
}

impl RedisUrl {
    /// Parses `s`.
    ///
    /// # Errors
    /// [`RedisSetError::Url`]: not a `redis://` URL, a TLS URL (`rediss://`,
    /// not supported by this build), an unknown query parameter, a bad name.
    pub fn parse(s: &str) -> Result<Self, RedisSetError> {
        let bad = |shown: &str, why: String| RedisSetError::Url {
            url: shown.to_owned(),
            why,
        };
        let mut u = url::Url::parse(s).map_err(|e| bad(&redact_text(s), e.to_string()))?;
        let mut shown_url = u.clone();
        if shown_url.password().is_some() {
            let _ = shown_url.set_password(Some("***"));
        }
        let shown = shown_url.to_string();
        match u.scheme() {
            "redis" => {}
            "rediss" => {
                return Err(bad(
                    &shown,
                    "TLS (rediss://) is not supported by this build of urikey; reach Redis \
                     over redis:// (a TLS tunnel such as stunnel, if the link needs one)"
                        .to_owned(),
                ))
            }
            other => return Err(bad(&shown, format!("the scheme is {other}, not redis"))),
        }
        if u.host_str().is_none_or(str::is_empty) {
            return Err(bad(&shown, "it names no host".to_owned()));
        }
        let mut name = DEFAULT_NAME.to_owned();
        let mut rest = Vec::new();
        for (k, v) in u.query_pairs() {
            match &*k {
                "name" => name = v.into_owned(),
                // Parameters the redis crate reads.
                "protocol" | "db" | "user" | "password" => {
                    rest.push((k.into_owned(), v.into_owned()));
                }
                other => {
                    return Err(bad(
                        &shown,
                        format!("unknown parameter `{other}` (urikey reads `name`)"),
                    ))
                }
            }
        }
        check_name(&name).map_err(|why| bad(&shown, why))?;
        if rest.is_empty() {
            u.set_query(None);
        } else {
            u.query_pairs_mut().clear().extend_pairs(rest);
        }
        Ok(Self {
            connect: u,
            shown,
            name,
        })
    }

    /// The URL without its password, for messages.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The set's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The URL the client connects with.
    pub(crate) fn connect(&self) -> &url::Url {
        &self.connect
    }

    /// The same URL for another node (`host:port`) of a cluster.
    pub(crate) fn for_node(&self, host: &str, port: u16) -> Result<url::Url, RedisSetError> {
        let mut u = self.connect.clone();
        let bad = |why: String| RedisSetError::Url {
            url: self.shown.clone(),
            why,
        };
        u.set_host(Some(host))
            .map_err(|e| bad(format!("node {host}: {e}")))?;
        u.set_port(Some(port))
            .map_err(|()| bad(format!("node {host}:{port}: no port")))?;
        // A cluster has one database.
        u.set_path("");
        Ok(u)
    }
}

/// The name becomes the prefix of every key: printable, and without the
/// braces of a Redis Cluster hash tag (ours spread the buckets over slots)
/// or the characters of a SCAN pattern.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 100 {
        return Err("the name must have 1 to 100 characters".to_owned());
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "_-.:/@#".contains(*c)))
    {
        Some(c) => Err(format!(
            "the name `{name}` has `{c}`: a name has letters, digits and _-.:/@#"
        )),
        None => Ok(()),
    }
}

/// `s` with what looks like a password replaced, for a URL that does not
/// parse.
fn redact_text(s: &str) -> String {
    match (s.find("://"), s.rfind('@')) {
        (Some(start), Some(at)) if at > start => {
            let auth = &s[start + 3..at];
            match auth.find(':') {
                Some(colon) => format!("{}{}:***{}", &s[..start + 3], &auth[..colon], &s[at..]),
                None => s.to_owned(),
            }
        }
        _ => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_url_takes_the_name_and_hides_the_password() {
        let u = RedisUrl::parse("redis://me:secret@127.0.0.1:7000/2?name=crawl.a").unwrap();
        assert_eq!(u.name(), "crawl.a");
        assert!(!u.shown().contains("secret"), "{}", u.shown());
        assert!(
            u.shown().contains("me:***@127.0.0.1:7000/2"),
            "{}",
            u.shown()
        );
        assert_eq!(u.connect().as_str(), "redis://me:secret@127.0.0.1:7000/2");
        let u = RedisUrl::parse("redis://localhost").unwrap();
        assert_eq!(u.name(), DEFAULT_NAME);
        let e = RedisUrl::parse("rediss://h:1/0").unwrap_err().to_string();
        assert!(e.contains("TLS"), "{e}");
        let e = RedisUrl::parse("redis://h:1/0?name=a{b}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`{`"), "{e}");
        let e = RedisUrl::parse("redis://h:1/0?nme=a")
            .unwrap_err()
            .to_string();
        assert!(e.contains("nme"), "{e}");
        let e = RedisUrl::parse("redis://u:pw@[::1")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("pw"), "{e}");
        assert!(is_redis_url("REDIS://x") && !is_redis_url("./redis"));
    }
}
