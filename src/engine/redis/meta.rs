//! The meta of a set: one string key, `NAME:meta`, written once by `init`
//! (SET NX: two clients making one set agree on the first) and changed only
//! by a grow (under WATCH). Lines of `field value`:
//!
//! ```text
//! urikey-redis-set
//! layout 1
//! key_version 1
//! config crawl +sort-query
//! identity profile=crawl flags=...
//! key_format uri
//! planned 100000000
//! base 19
//! levels 19 21
//! growing 23            (only while a grow runs)
//! ```
//!
//! `levels` are the bucket levels in use, the last the current one, where
//! new writers write; `growing` is the level a grow moves buckets to.

use crate::uri::key::{Identity, IdentityDiff, KeyConfig, KEY_VERSION};

use super::error::RedisSetError;
use super::layout::{MAX_BITS, TAG_BITS};

/// The first line of a meta.
const MAGIC: &str = "urikey-redis-set";

/// The version of the layout this build reads and writes.
pub const LAYOUT_VERSION: u32 = 1;

/// The meta of a set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    /// The layout version.
    pub layout: u32,
    /// The key version of the fingerprints.
    pub key_version: u32,
    /// The key configuration as given at `init`.
    pub config: String,
    /// Its identity (what decides fingerprints).
    pub identity: Identity,
    /// The key format recorded with it.
    pub key_format: String,
    /// The planned number of keys.
    pub planned: u64,
    /// The bucket bits the set was made with.
    pub base: u32,
    /// The bucket levels in use, ascending; the last is current.
    pub levels: Vec<u32>,
    /// The level a running grow moves to.
    pub growing: Option<u32>,
}

impl Meta {
    /// The meta of a new set for `config`, planned for `planned` keys in
    /// buckets of `base` bits.
    pub fn new(config: &KeyConfig, planned: u64, base: u32) -> Self {
        Self {
            layout: LAYOUT_VERSION,
            key_version: KEY_VERSION,
            config: config.to_string(),
            identity: config.identity(),
            key_format: config.format.to_string(),
            planned,
            base,
            levels: vec![base],
            growing: None,
        }
    }

    /// The level new writes go to.
    pub fn level(&self) -> u32 {
        *self.levels.last().unwrap_or(&self.base)
    }

    /// Every level that may hold members (those in use and a grow's).
    pub fn all_levels(&self) -> Vec<u32> {
        let mut v = self.levels.clone();
        v.extend(self.growing);
        v
    }

    /// The stored text.
    pub fn encode(&self) -> String {
        let levels: Vec<String> = self.levels.iter().map(u32::to_string).collect();
        let mut s = format!(
            "{MAGIC}\nlayout {}\nkey_version {}\nconfig {}\nidentity {}\nkey_format {}\n\
             planned {}\nbase {}\nlevels {}\n",
            self.layout,
            self.key_version,
            self.config,
            self.identity,
            self.key_format,
            self.planned,
            self.base,
            levels.join(" ")
        );
        if let Some(g) = self.growing {
            s.push_str(&format!("growing {g}\n"));
        }
        s
    }

    /// Reads a stored meta.
    ///
    /// # Errors
    /// What is wrong with it.
    pub fn decode(text: &[u8]) -> Result<Self, String> {
        let text = std::str::from_utf8(text).map_err(|_| "not UTF-8".to_owned())?;
        let mut lines = text.lines();
        if lines.next() != Some(MAGIC) {
            return Err(format!("it does not start with `{MAGIC}`"));
        }
        let mut m = Meta {
            layout: 0,
            key_version: 0,
            config: String::new(),
            identity: Identity::default(),
            key_format: String::new(),
            planned: 0,
            base: 0,
            levels: Vec::new(),
            growing: None,
        };
        let number = |field: &str, v: &str| -> Result<u64, String> {
            v.parse()
                .map_err(|_| format!("{field} `{v}` is not a number"))
        };
        for line in lines {
            let (field, value) = line.split_once(' ').unwrap_or((line, ""));
            match field {
                "layout" => m.layout = number(field, value)? as u32,
                "key_version" => m.key_version = number(field, value)? as u32,
                "config" => m.config = value.to_owned(),
                "identity" => m.identity = Identity::from_text(value),
                "key_format" => m.key_format = value.to_owned(),
                "planned" => m.planned = number(field, value)?,
                "base" => m.base = number(field, value)? as u32,
                "levels" => {
                    m.levels = value
                        .split(' ')
                        .map(|v| number(field, v).map(|n| n as u32))
                        .collect::<Result<_, _>>()?;
                }
                "growing" => m.growing = Some(number(field, value)? as u32),
                // Fields of a later layout version are the version check's.
                _ => {}
            }
        }
        if m.layout == 0 {
            return Err("no layout version".to_owned());
        }
        if m.layout == LAYOUT_VERSION {
            let ok_level = |l: &u32| (TAG_BITS..=MAX_BITS).contains(l) && *l >= m.base;
            if !(TAG_BITS..=MAX_BITS).contains(&m.base)
                || m.levels.first() != Some(&m.base)
                || !m.levels.iter().all(ok_level)
                || !m.levels.windows(2).all(|w| w[0] < w[1])
                || m.growing.is_some_and(|g| !ok_level(&g) || g <= m.level())
                || m.identity.is_empty()
            {
                return Err("its levels or identity are not those of a set".to_owned());
            }
        }
        Ok(m)
    }

    /// Checks that keys of `config`, computed by this build, belong in the
    /// set at `url`.
    ///
    /// # Errors
    /// [`RedisSetError::Version`], [`RedisSetError::ConfigMismatch`].
    pub fn check(&self, url: &str, config: &KeyConfig) -> Result<(), RedisSetError> {
        self.check_versions(url)?;
        let identity = config.identity();
        if self.identity != identity {
            let d = self.identity.diff(&identity);
            return Err(RedisSetError::ConfigMismatch {
                url: url.to_owned(),
                set: format!(
                    "`{}` ({})",
                    self.config,
                    IdentityDiff::describe(&d.only_self)
                ),
                asked: format!("`{config}` ({})", IdentityDiff::describe(&d.only_other)),
            });
        }
        Ok(())
    }

    /// Checks the layout and key versions.
    ///
    /// # Errors
    /// [`RedisSetError::Version`].
    pub fn check_versions(&self, url: &str) -> Result<(), RedisSetError> {
        let version = |set: String, current: String| RedisSetError::Version {
            url: url.to_owned(),
            set,
            current,
            config: self.config.clone(),
        };
        if self.layout != LAYOUT_VERSION {
            return Err(version(
                format!("layout version {}", self.layout),
                format!("layout version {LAYOUT_VERSION}"),
            ));
        }
        if self.key_version != KEY_VERSION {
            return Err(version(
                format!("key version {}", self.key_version),
                format!("key version {KEY_VERSION}"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_meta_round_trips_and_refuses_other_configurations() {
        let config: KeyConfig = "crawl +sort-query".parse().unwrap();
        let mut m = Meta::new(&config, 1000, 16);
        m.levels.push(18);
        m.growing = Some(20);
        let back = Meta::decode(m.encode().as_bytes()).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.level(), 18);
        assert_eq!(back.all_levels(), [16, 18, 20]);
        m.check("u", &config).unwrap();
        let rfc: KeyConfig = "rfc".parse().unwrap();
        let e = m.check("redis://h/0", &rfc).unwrap_err().to_string();
        assert!(
            e.contains("`crawl +sort-query`") && e.contains("`rfc`"),
            "{e}"
        );
        assert!(e.contains("redis://h/0"), "{e}");
        let mut old = m.clone();
        old.layout = 2;
        let e = old.check("u", &config).unwrap_err().to_string();
        assert!(
            e.contains("layout version 2") && e.contains("layout version 1"),
            "{e}"
        );
        let mut old = m.clone();
        old.key_version = KEY_VERSION + 1;
        assert!(old.check("u", &config).is_err());
        assert!(Meta::decode(b"hello").is_err());
        assert!(Meta::decode(b"urikey-redis-set\nlayout 1\nbase 3\n").is_err());
    }
}
