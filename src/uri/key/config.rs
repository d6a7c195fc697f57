//! The keying configuration as a value: profile, flags, lenient input and
//! key format. Every part parses from ([`FromStr`]) and prints as
//! ([`Display`](fmt::Display)) the command line's spelling, so the
//! commands, the engine and the bindings share one vocabulary.
//!
//! ```
//! use urikey::uri::key::{FlagList, KeyConfig, KeyFormat};
//! use urikey::uri::normalize::Profile;
//! let mut config = KeyConfig::default(); // profile rfc, strict, uri keys
//! config.profile = "crawl".parse::<Profile>()?;
//! config.enable = "sort-query,remove-query-params=utm_*;ref".parse::<FlagList>()?;
//! config.format = "surt".parse::<KeyFormat>()?;
//! assert_eq!(config.to_string(), "crawl +sort-query,remove-query-params=utm_*;ref key=surt");
//! assert_eq!(config.to_string().parse::<KeyConfig>()?, config);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;
use core::str::FromStr;

use super::{Identity, KeyFormat, Keyer};
use crate::uri::compat::Compat;
use crate::uri::normalize::{Flag, Normalizer, Profile};

/// A configuration value that does not parse; the message names the
/// offending word and the valid ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(String);

impl ConfigError {
    fn new(message: String) -> Self {
        Self(message)
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

fn names<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str) -> String {
    all.iter().map(|t| name(*t)).collect::<Vec<_>>().join(", ")
}

impl FromStr for Profile {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        Profile::from_name(s).ok_or_else(|| {
            ConfigError::new(format!(
                "unknown profile {s:?}; valid profiles: {}",
                names(Profile::ALL, Profile::name)
            ))
        })
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Flag {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        Flag::from_name(s).ok_or_else(|| {
            ConfigError::new(format!(
                "unknown normalization flag {s:?}; valid flags: {}",
                names(Flag::ALL, Flag::name)
            ))
        })
    }
}

impl KeyFormat {
    /// Every key format.
    pub const ALL: &'static [KeyFormat] = &[KeyFormat::Uri, KeyFormat::Surt, KeyFormat::Hash];
}

impl FromStr for KeyFormat {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        KeyFormat::ALL
            .iter()
            .copied()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                ConfigError::new(format!(
                    "unknown key format {s:?}; valid formats: {}",
                    names(KeyFormat::ALL, KeyFormat::name)
                ))
            })
    }
}

impl fmt::Display for KeyFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One flag setting: a flag, or `remove-query-params` with its names
/// (`remove-query-params=utm_*;ref`; a name ending in `*` is a prefix).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FlagSetting {
    /// A flag without parameters.
    Flag(Flag),
    /// [`Flag::RemoveQueryParams`] with the parameter names it drops.
    RemoveQueryParams(Vec<String>),
}

impl FlagSetting {
    /// The flag this setting turns on or off.
    pub fn flag(&self) -> Flag {
        match self {
            FlagSetting::Flag(f) => *f,
            FlagSetting::RemoveQueryParams(_) => Flag::RemoveQueryParams,
        }
    }
}

impl FromStr for FlagSetting {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        let s = s.trim();
        if let Some((name, value)) = s.split_once('=') {
            if name.parse::<Flag>()? != Flag::RemoveQueryParams {
                return Err(ConfigError::new(format!("flag {name:?} takes no value")));
            }
            let names: Vec<String> = value
                .split(';')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
                .collect();
            if names.is_empty() {
                return Err(ConfigError::new(
                    "remove-query-params needs a list: remove-query-params=utm_*;ref".to_owned(),
                ));
            }
            return Ok(FlagSetting::RemoveQueryParams(names));
        }
        Ok(FlagSetting::Flag(s.parse()?))
    }
}

impl fmt::Display for FlagSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlagSetting::Flag(flag) => f.write_str(flag.name()),
            FlagSetting::RemoveQueryParams(names) => {
                write!(f, "{}={}", Flag::RemoveQueryParams.name(), names.join(";"))
            }
        }
    }
}

/// A comma-separated list of [`FlagSetting`]s, as `--with`/`--without`
/// take them (`sort-query,remove-query-params=utm_*;ref`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FlagList(pub Vec<FlagSetting>);

impl FlagList {
    /// True when the list has no setting.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Appends the settings of `other`.
    pub fn extend(&mut self, other: FlagList) {
        self.0.extend(other.0);
    }
}

impl FromStr for FlagList {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        s.split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| {
                let setting: FlagSetting = item.parse()?;
                if setting == FlagSetting::Flag(Flag::RemoveQueryParams) {
                    return Err(ConfigError::new(
                        "remove-query-params needs a list: remove-query-params=utm_*;ref"
                            .to_owned(),
                    ));
                }
                Ok(setting)
            })
            .collect::<Result<_, _>>()
            .map(FlagList)
    }
}

impl fmt::Display for FlagList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, setting) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{setting}")?;
        }
        Ok(())
    }
}

/// Everything that decides a key: a profile, flags turned on and off on
/// top of it, lenient input, and the key format; or instead a
/// compatibility preset, which reproduces another tool's keys. `Default` is
/// profile `rfc`, strict, `uri` keys.
///
/// As a string (`FromStr`/`Display`): the profile, then `+FLAGS` (turned
/// on), `-FLAGS` (turned off), `lenient` and `key=FORMAT`, separated by
/// spaces: `crawl +sort-query -remove-fragment lenient key=surt`; or
/// `compat=NAME` alone (`compat=w3lib`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct KeyConfig {
    /// The starting set of flags.
    pub profile: Profile,
    /// Flags turned on (applied after the profile).
    pub enable: FlagList,
    /// Flags turned off (applied last).
    pub disable: FlagList,
    /// Map dirty input the RFC 3987 §3.1 way before parsing.
    pub lenient: bool,
    /// How keys are written.
    pub format: KeyFormat,
    /// Reproduce this tool's keys instead (the fields above are then not
    /// used, and must keep their defaults).
    pub compat: Option<Compat>,
}

impl KeyConfig {
    /// The configuration of `profile`, strict, `uri` keys.
    pub fn profile(profile: Profile) -> Self {
        Self {
            profile,
            ..Self::default()
        }
    }

    /// The normalizer: the profile's flags, then `enable`, then `disable`.
    pub fn normalizer(&self) -> Normalizer {
        let mut n = Normalizer::profile(self.profile);
        for setting in &self.enable.0 {
            n = match setting {
                FlagSetting::Flag(flag) => n.with(*flag),
                FlagSetting::RemoveQueryParams(names) => n.remove_query_params(names),
            };
        }
        for setting in &self.disable.0 {
            n = n.without(setting.flag());
        }
        n
    }

    /// The configuration of a compatibility preset.
    pub fn compat(preset: Compat) -> Self {
        Self {
            compat: Some(preset),
            ..Self::default()
        }
    }

    /// Checks that a compatibility preset comes alone.
    ///
    /// # Errors
    /// A compat preset with a profile other than `rfc`, flags, lenient input
    /// or a key format other than `uri`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if let Some(preset) = self.compat {
            let alone = KeyConfig::compat(preset);
            if *self != alone {
                return Err(ConfigError::new(format!(
                    "the compat preset {preset} reproduces another tool's keys: it takes no \
                     profile, flags, lenient input or key format"
                )));
            }
        }
        Ok(())
    }

    /// What decides the keys' fingerprints, in one canonical spelling: two
    /// configurations with the same identity give every input the same
    /// fingerprint (with this crate's [`KEY_VERSION`](super::KEY_VERSION)).
    /// It names the effective flags (the profile's, then those turned on,
    /// less those turned off) in [`Flag::ALL`] order, the parameters
    /// `remove-query-params` drops (sorted, when that flag is on) and
    /// lenient input; or the compatibility preset. The key format is not
    /// part of it: fingerprints are those of the `uri` key in every format.
    ///
    /// ```
    /// use urikey::uri::key::KeyConfig;
    /// let a: KeyConfig = "crawl +sort-query -idna".parse()?;
    /// let b: KeyConfig = "rfc +idna,sort-query,remove-fragment -idna key=surt".parse()?;
    /// assert_ne!(a.identity(), b.identity()); // crawl has more flags than these
    /// let c: KeyConfig = "crawl -idna +sort-query,remove-fragment".parse()?;
    /// assert_eq!(a.identity(), c.identity());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn identity(&self) -> Identity {
        if let Some(preset) = self.compat {
            return Identity::from_text(format!("compat={preset}"));
        }
        let n = self.normalizer();
        let flags: Vec<&str> = Flag::ALL
            .iter()
            .filter(|f| n.has(**f))
            .map(|f| f.name())
            .collect();
        let mut out = format!("flags={}", flags.join(","));
        if n.has(Flag::RemoveQueryParams) {
            let mut params: Vec<&str> = self
                .enable
                .0
                .iter()
                .filter_map(|s| match s {
                    FlagSetting::RemoveQueryParams(names) => Some(names),
                    FlagSetting::Flag(_) => None,
                })
                .flatten()
                .map(String::as_str)
                .collect();
            params.sort_unstable();
            params.dedup();
            out.push_str(&format!(" params={}", params.join(";")));
        }
        if self.lenient {
            out.push_str(" lenient");
        }
        Identity::from_text(out)
    }

    /// The keyer this configuration describes.
    pub fn keyer(&self) -> Keyer {
        if let Some(preset) = self.compat {
            return Keyer::compat(preset);
        }
        Keyer::new(self.normalizer())
            .with_lenient(self.lenient)
            .with_format(self.format)
    }
}

impl FromStr for KeyConfig {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        let mut words = s.split_whitespace();
        if let Some(name) = s.trim_start().strip_prefix("compat=") {
            let name = name.trim();
            let preset: Compat = name
                .parse()
                .map_err(|e: crate::uri::compat::UnknownCompat| ConfigError::new(e.to_string()))?;
            if words.nth(1).is_some() {
                return Err(ConfigError::new(format!(
                    "the compat preset {preset} comes alone in a key configuration"
                )));
            }
            return Ok(KeyConfig::compat(preset));
        }
        let mut config = KeyConfig {
            profile: words.next().unwrap_or("rfc").parse()?,
            ..KeyConfig::default()
        };
        for word in words {
            if let Some(flags) = word.strip_prefix('+') {
                config.enable.extend(flags.parse()?);
            } else if let Some(flags) = word.strip_prefix('-') {
                config.disable.extend(flags.parse()?);
            } else if let Some(format) = word.strip_prefix("key=") {
                config.format = format.parse()?;
            } else if word == "lenient" {
                config.lenient = true;
            } else {
                return Err(ConfigError::new(format!(
                    "unknown word {word:?} in a key configuration; expected +FLAGS, -FLAGS, lenient or key=FORMAT"
                )));
            }
        }
        Ok(config)
    }
}

impl fmt::Display for KeyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(preset) = self.compat {
            return write!(f, "compat={preset}");
        }
        f.write_str(self.profile.name())?;
        if !self.enable.is_empty() {
            write!(f, " +{}", self.enable)?;
        }
        if !self.disable.is_empty() {
            write!(f, " -{}", self.disable)?;
        }
        if self.lenient {
            f.write_str(" lenient")?;
        }
        if self.format != KeyFormat::Uri {
            write!(f, " key={}", self.format)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_parts_round_trip() {
        for p in Profile::ALL {
            assert_eq!(p.to_string().parse::<Profile>(), Ok(*p));
        }
        for f in Flag::ALL {
            assert_eq!(f.to_string().parse::<Flag>(), Ok(*f));
        }
        for k in KeyFormat::ALL {
            assert_eq!(k.to_string().parse::<KeyFormat>(), Ok(*k));
        }
        let list: FlagList = " sort-query , remove-query-params=utm_*;ref,"
            .parse()
            .unwrap();
        assert_eq!(list.to_string(), "sort-query,remove-query-params=utm_*;ref");
        assert_eq!(list.to_string().parse::<FlagList>(), Ok(list));
    }

    #[test]
    fn config_errors_name_the_word() {
        let e = "bogus".parse::<Profile>().unwrap_err().to_string();
        assert!(e.contains("\"bogus\"") && e.contains("crawl"), "{e}");
        let e = "sort-query=1".parse::<FlagList>().unwrap_err().to_string();
        assert!(e.contains("takes no value"), "{e}");
        let e = "remove-query-params"
            .parse::<FlagList>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("needs a list"), "{e}");
        let e = "rfc key=xml".parse::<KeyConfig>().unwrap_err().to_string();
        assert!(e.contains("\"xml\""), "{e}");
        assert!("rfc sideways".parse::<KeyConfig>().is_err());
    }

    #[test]
    fn config_builds_the_normalizer_in_order() {
        let c: KeyConfig = "crawl +sort-query -remove-fragment,sort-query lenient"
            .parse()
            .unwrap();
        let n = c.normalizer();
        assert!(!n.has(Flag::SortQuery) && !n.has(Flag::RemoveFragment));
        assert!(n.has(Flag::Idna));
        assert!(c.keyer().is_lenient());
        assert_eq!(c.to_string().parse::<KeyConfig>(), Ok(c));
        assert_eq!("".parse::<KeyConfig>(), Ok(KeyConfig::default()));
    }

    #[test]
    fn config_identity_is_what_decides_fingerprints() {
        let id = |s: &str| s.parse::<KeyConfig>().unwrap().identity();
        // Spelling, order and the key format do not matter.
        assert_eq!(id("rfc"), id("rfc key=surt"));
        assert_eq!(id("crawl"), id("crawl +remove-fragment"));
        assert_eq!(
            id("rfc +sort-query,remove-www"),
            id("rfc +remove-www +sort-query")
        );
        assert_eq!(
            id("rfc +remove-query-params=b;a +remove-query-params=a"),
            id("rfc +remove-query-params=a;b")
        );
        // The flags, their parameters and lenient input do.
        assert_ne!(id("rfc"), id("crawl"));
        assert_ne!(id("rfc"), id("rfc lenient"));
        assert_ne!(
            id("rfc +remove-query-params=a"),
            id("rfc +remove-query-params=b")
        );
        let mut off: KeyConfig = "rfc +remove-query-params=a".parse().unwrap();
        off.disable = FlagList(vec![FlagSetting::Flag(Flag::RemoveQueryParams)]);
        assert_eq!(off.identity(), id("rfc"));
        assert_eq!(id("compat=w3lib").as_str(), "compat=w3lib");
        assert_ne!(id("compat=w3lib"), id("compat=ia-surt"));
    }

    #[test]
    fn config_compat_comes_alone() {
        let c: KeyConfig = "compat=w3lib".parse().unwrap();
        assert_eq!(c, KeyConfig::compat(Compat::W3lib));
        assert_eq!(c.to_string(), "compat=w3lib");
        assert!(c.validate().is_ok());
        assert!("compat=w3lib key=surt".parse::<KeyConfig>().is_err());
        assert!("compat=nope".parse::<KeyConfig>().is_err());
        let mut mixed = KeyConfig::compat(Compat::IaSurt);
        mixed.lenient = true;
        assert!(mixed.validate().is_err());
        let k = c.keyer();
        let mut scratch = super::super::KeyScratch::default();
        let key = k
            .key(b"http://Example.com/do?c=1&b=2#f", &mut scratch)
            .unwrap();
        assert_eq!(key.as_str(), "http://example.com/do?b=2&c=1");
    }
}
