//! The keying options every entry point takes (`profile`, `enable`,
//! `disable`, `lenient`, `key`) as the library's [`KeyConfig`], and the
//! [`Keyer`] it builds. Names and flag lists parse exactly as on the command
//! line (`--with sort-query,remove-query-params=utm_*;ref`).
//!
//! `compat="w3lib"` selects a compatibility preset instead; it comes alone
//! (no other option may differ from its default).
//!
//! The dedup calls (`dedup_file`, `Deduplicator`, `unique_mask`) also take
//! `base` and `allow_relative`, as `urikey dedup --base/--allow-relative`
//! ([`relative`]).

use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use urikey::uri::compat::UnknownCompat;
use urikey::uri::key::{ConfigError, FlagList, KeyConfig, Keyer, Relative};

/// A keyer and the configuration it was built from. Cheap to share between
/// threads.
#[derive(Clone, Debug)]
pub struct Keying {
    pub keyer: Keyer,
    pub config: KeyConfig,
}

fn value_error(e: ConfigError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The name of `obj`'s type, for error messages.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
}

/// `enable`/`disable` (named `what`): one string or any iterable of
/// strings, each a comma-separated flag list.
fn flag_list(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<FlagList> {
    let mut list = FlagList::default();
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(list);
    };
    if let Ok(s) = obj.extract::<String>() {
        return s.parse().map_err(value_error);
    }
    let not_flags = |o: &Bound<'_, PyAny>| {
        PyTypeError::new_err(format!(
            "{what} must be a str or a list of str (flag names), not {}",
            type_name(o)
        ))
    };
    for item in obj.try_iter().map_err(|_| not_flags(obj))? {
        let item = item?;
        let text: String = item.extract().map_err(|_| not_flags(&item))?;
        list.extend(text.parse().map_err(value_error)?);
    }
    Ok(list)
}

/// What a dedup call does with relative references, from its `base` and
/// `allow_relative` arguments, as `urikey dedup` does with `--base` and
/// `--allow-relative`: a URL dump holds absolute URLs, so by default a
/// relative reference (`/a`, `hello`) is an invalid line
/// (`relative-reference`); `base` resolves it against an absolute URI
/// first; `allow_relative=True` keys it as it is.
pub fn relative(base: Option<&str>, allow_relative: bool) -> PyResult<Relative> {
    match (base, allow_relative) {
        (Some(_), true) => Err(PyValueError::new_err(
            "base and allow_relative=True cannot be used together",
        )),
        (Some(base), false) => Relative::resolve_against(base).map_err(|e| {
            PyValueError::new_err(format!("base {base:?} is not an absolute URI: {e}"))
        }),
        (None, true) => Ok(Relative::Allow),
        (None, false) => Ok(Relative::Reject),
    }
}

/// The configuration of the Python arguments.
pub fn config(
    profile: &str,
    enable: Option<&Bound<'_, PyAny>>,
    disable: Option<&Bound<'_, PyAny>>,
    lenient: bool,
    key: &str,
    compat: Option<&str>,
) -> PyResult<KeyConfig> {
    let config = KeyConfig {
        profile: profile.parse().map_err(value_error)?,
        enable: flag_list(enable, "enable")?,
        disable: flag_list(disable, "disable")?,
        lenient,
        format: key.parse().map_err(value_error)?,
        compat: compat
            .map(|name| {
                name.parse()
                    .map_err(|e: UnknownCompat| PyValueError::new_err(e.to_string()))
            })
            .transpose()?,
    };
    config.validate().map_err(value_error)?;
    Ok(config)
}

/// The keyer of a configuration.
pub fn build(config: KeyConfig) -> Arc<Keying> {
    Arc::new(Keying {
        keyer: config.keyer(),
        config,
    })
}

impl Keying {
    /// This keying with relative references treated as `relative` says.
    pub fn with_relative(&self, relative: Relative) -> Keying {
        Keying {
            keyer: self.keyer.clone().with_relative(relative),
            config: self.config.clone(),
        }
    }

    /// `profile='rfc', enable=[...], ...` as the Python call spells it.
    pub fn repr(&self, with_key: bool) -> String {
        let c = &self.config;
        if let Some(preset) = c.compat {
            return format!("compat='{preset}'");
        }
        let mut s = format!("profile='{}'", c.profile);
        let list = |l: &FlagList| {
            let items: Vec<String> = l.0.iter().map(|f| format!("'{f}'")).collect();
            format!("[{}]", items.join(", "))
        };
        if !c.enable.is_empty() {
            s.push_str(&format!(", enable={}", list(&c.enable)));
        }
        if !c.disable.is_empty() {
            s.push_str(&format!(", disable={}", list(&c.disable)));
        }
        if c.lenient {
            s.push_str(", lenient=True");
        }
        if with_key && c.format.to_string() != "uri" {
            s.push_str(&format!(", key='{}'", c.format));
        }
        s
    }
}

/// `memory_limit`: a number of bytes or a size such as `"512M"` or `"4G"`
/// (read as on the command line); `None` keeps the default, a share of the
/// machine's memory (or of the cgroup's limit).
pub fn memory_limit(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    let not_a_size =
        || PyTypeError::new_err("memory_limit must be a number of bytes or a size such as '512M'");
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    // `True` is an int to Python; as a size it can only be a mistake.
    if obj.is_instance_of::<pyo3::types::PyBool>() {
        return Err(not_a_size());
    }
    if let Ok(bytes) = obj.extract::<u64>() {
        return Ok(Some(bytes));
    }
    if let Ok(text) = obj.extract::<String>() {
        return urikey::engine::memory::parse_size(&text)
            .map(Some)
            .map_err(PyValueError::new_err);
    }
    if obj.extract::<i64>().is_ok() {
        return Err(PyValueError::new_err("memory_limit cannot be negative"));
    }
    Err(not_a_size())
}
