//! The keying options every entry point takes (`profile`, `enable`,
//! `disable`, `lenient`, `key`), turned into the library's canonicalizer.
//!
//! This is the only file that knows how the library spells its settings;
//! the flag grammar is the CLI's (`--with`/`--without`), so names and
//! `remove-query-params=utm_*;ref` read the same in both places.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use urikey::uri::key::{Canonicalizer, KeyFormat};
use urikey::uri::normalize::{Flag, Normalizer, Profile};

/// A canonicalizer and the format its keys are written in: what one set of
/// options means. Cheap to share between threads.
#[derive(Clone, Debug)]
pub struct Keying {
    pub canon: Canonicalizer,
    pub format: KeyFormat,
    /// The options as given, for `repr()`.
    pub spec: Spec,
}

/// The options as the caller wrote them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Spec {
    pub profile: String,
    pub enable: Vec<String>,
    pub disable: Vec<String>,
    pub lenient: bool,
    pub key: String,
}

impl Default for Spec {
    fn default() -> Self {
        Self {
            profile: "rfc".to_owned(),
            enable: Vec::new(),
            disable: Vec::new(),
            lenient: false,
            key: "uri".to_owned(),
        }
    }
}

/// `enable`/`disable`: one name, or any iterable of names. Each item may hold
/// several comma-separated flags, as on the command line.
pub fn names(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(obj) = obj else {
        return Ok(Vec::new());
    };
    if let Ok(s) = obj.extract::<String>() {
        return Ok(vec![s]);
    }
    let mut out = Vec::new();
    for item in obj.try_iter()? {
        out.push(item?.extract::<String>()?);
    }
    Ok(out)
}

fn flag(name: &str) -> PyResult<Flag> {
    Flag::from_name(name).ok_or_else(|| {
        let valid: Vec<&str> = Flag::ALL.iter().map(|f| f.name()).collect();
        PyValueError::new_err(format!(
            "unknown normalization flag {name:?}; valid flags: {}",
            valid.join(", ")
        ))
    })
}

fn items(lists: &[String]) -> impl Iterator<Item = &str> {
    lists
        .iter()
        .flat_map(|l| l.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

impl Spec {
    /// The normalizer these options describe (the CLI's rules: profile,
    /// then every enabled flag, then every disabled one).
    fn normalizer(&self) -> PyResult<Normalizer> {
        let profile = Profile::from_name(&self.profile).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown profile {:?}; valid profiles: none, syntax, rfc, crawl",
                self.profile
            ))
        })?;
        let mut n = Normalizer::profile(profile);
        for item in items(&self.enable) {
            if let Some((name, value)) = item.split_once('=') {
                if flag(name)? != Flag::RemoveQueryParams {
                    return Err(PyValueError::new_err(format!(
                        "flag {name:?} takes no value"
                    )));
                }
                n = n.remove_query_params(value.split(';').filter(|s| !s.is_empty()));
            } else {
                let f = flag(item)?;
                if f == Flag::RemoveQueryParams {
                    return Err(PyValueError::new_err(
                        "remove-query-params needs a list: remove-query-params=utm_*;ref",
                    ));
                }
                n = n.with(f);
            }
        }
        for item in items(&self.disable) {
            n = n.without(flag(item)?);
        }
        Ok(n)
    }

    fn format(&self) -> PyResult<KeyFormat> {
        Ok(match self.key.as_str() {
            "uri" => KeyFormat::Uri,
            "surt" => KeyFormat::Surt,
            "hash" => KeyFormat::Hash,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown key format {other:?}; valid formats: uri, surt, hash"
                )))
            }
        })
    }

    /// Checks the options and builds what they describe.
    pub fn build(self) -> PyResult<Arc<Keying>> {
        let canon = Canonicalizer::new(self.normalizer()?).with_lenient(self.lenient);
        Ok(Arc::new(Keying {
            canon,
            format: self.format()?,
            spec: self,
        }))
    }

    /// `profile='rfc', enable=[...], ...` as a Python call would spell it.
    pub fn repr(&self) -> String {
        let mut s = format!("profile={:?}", self.profile);
        if !self.enable.is_empty() {
            s.push_str(&format!(", enable={:?}", self.enable));
        }
        if !self.disable.is_empty() {
            s.push_str(&format!(", disable={:?}", self.disable));
        }
        if self.lenient {
            s.push_str(", lenient=True");
        }
        if self.key != "uri" {
            s.push_str(&format!(", key={:?}", self.key));
        }
        s
    }
}
