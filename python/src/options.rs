//! The keying options every entry point takes (`profile`, `enable`,
//! `disable`, `lenient`, `key`) as the library's [`KeyConfig`], and the
//! [`Keyer`] it builds. Names and flag lists parse exactly as on the command
//! line (`--with sort-query,remove-query-params=utm_*;ref`).
//!
//! `compat="w3lib"` selects a compatibility preset instead; it comes alone
//! (no other option may differ from its default).

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use urikey::uri::compat::UnknownCompat;
use urikey::uri::key::{ConfigError, FlagList, KeyConfig, Keyer};

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

/// `enable`/`disable`: one string or any iterable of strings, each a
/// comma-separated flag list.
fn flag_list(obj: Option<&Bound<'_, PyAny>>) -> PyResult<FlagList> {
    let mut list = FlagList::default();
    let Some(obj) = obj else {
        return Ok(list);
    };
    if let Ok(s) = obj.extract::<String>() {
        return s.parse().map_err(value_error);
    }
    for item in obj.try_iter()? {
        let item: String = item?.extract()?;
        list.extend(item.parse().map_err(value_error)?);
    }
    Ok(list)
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
        enable: flag_list(enable)?,
        disable: flag_list(disable)?,
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
    let not_a_size = || {
        pyo3::exceptions::PyTypeError::new_err(
            "memory_limit must be a number of bytes or a size such as '512M'",
        )
    };
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
