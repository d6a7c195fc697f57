//! `urikey.RedisSeenSet`: the seen-set a fleet of crawlers shares in Redis
//! (docs/redis.md). Given a URL, batches go through our own pipelined client
//! with the GIL released; given a redis-py client (`redis.Redis` or
//! `redis.cluster.RedisCluster`), through its pipelines, so a crawler's own
//! connection is reused.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyConnectionError, PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PySet, PyString};
use urikey::engine::redis::{
    Op, Open, RedisClient, RedisSeenSet, RedisSetError, RedisUrl, Reply, Transport, DEFAULT_NAME,
    DEFAULT_PLANNED,
};
use urikey::uri::key::Relative;

use crate::batch::Batch;
use crate::fingerprints::{indexed_fingerprints, scatter, valid_fingerprints};
use crate::options::{self, Keying};

/// The Python exception of a set's error.
fn set_error(e: RedisSetError) -> PyErr {
    match e {
        RedisSetError::Url { .. }
        | RedisSetError::ConfigMismatch { .. }
        | RedisSetError::Version { .. }
        | RedisSetError::EvictingPolicy { .. }
        | RedisSetError::Exists { .. } => PyValueError::new_err(e.to_string()),
        RedisSetError::Connection { .. } | RedisSetError::Auth { .. } => {
            PyConnectionError::new_err(e.to_string())
        }
        _ => PyOSError::new_err(e.to_string()),
    }
}

fn poisoned() -> PyErr {
    PyRuntimeError::new_err("the RedisSeenSet is unusable after a failed call")
}

/// A redis-py client as the set's connection.
struct PyTransport {
    client: Py<PyAny>,
    url: String,
}

impl std::fmt::Debug for PyTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PyTransport")
            .field("url", &self.url)
            .finish()
    }
}

/// The text of a redis-py error, as a Redis error reply (`code message`).
fn reply_error(e: &Bound<'_, PyAny>) -> Reply {
    let message = e.str().map_or_else(|_| "?".to_owned(), |s| s.to_string());
    let code = message.split(' ').next().unwrap_or("").to_owned();
    Reply::Error { code, message }
}

/// An integer from a redis-py reply item (int, bytes or str).
fn int_of(v: &Bound<'_, PyAny>) -> Option<i64> {
    if let Ok(n) = v.extract::<i64>() {
        return Some(n);
    }
    if let Ok(b) = v.downcast::<PyBytes>() {
        return std::str::from_utf8(b.as_bytes()).ok()?.parse().ok();
    }
    v.downcast::<PyString>().ok()?.to_str().ok()?.parse().ok()
}

/// The reply to `op` from what redis-py's pipeline returned for it.
fn py_reply(op: &Op<'_>, v: &Bound<'_, PyAny>) -> Reply {
    let py = v.py();
    if v.is_instance_of::<pyo3::exceptions::PyException>() {
        return reply_error(v);
    }
    match op {
        Op::Get { .. } => {
            if v.is_none() {
                Reply::Value(None)
            } else if let Ok(b) = v.downcast::<PyBytes>() {
                Reply::Value(Some(b.as_bytes().to_vec()))
            } else if let Ok(s) = v.downcast::<PyString>() {
                Reply::Value(Some(s.to_string().into_bytes()))
            } else {
                Reply::Value(None)
            }
        }
        Op::Add { .. } | Op::Card { .. } => match int_of(v) {
            Some(n) => Reply::Int(n),
            None => Reply::Error {
                code: "PROTOCOL".to_owned(),
                message: format!("an unexpected reply {v}"),
            },
        },
        Op::Contains { .. } | Op::Members { .. } => {
            let items: Vec<Bound<'_, PyAny>> = if let Ok(l) = v.downcast::<PyList>() {
                l.iter().collect()
            } else if let Ok(s) = v.downcast::<PySet>() {
                s.iter().collect()
            } else {
                match v.try_iter() {
                    Ok(it) => it.filter_map(Result::ok).collect(),
                    Err(_) => Vec::new(),
                }
            };
            let mut out = Vec::with_capacity(items.len());
            for item in &items {
                match int_of(item) {
                    Some(n) => out.push(n),
                    // redis-py gives SMISMEMBER's flags as bools or ints.
                    None => match item.extract::<bool>() {
                        Ok(b) => out.push(i64::from(b)),
                        Err(_) => {
                            let _ = py;
                            return Reply::Error {
                                code: "NOTOURS".to_owned(),
                                message: "a member that is not a 64-bit integer".to_owned(),
                            };
                        }
                    },
                }
            }
            Reply::Ints(out)
        }
    }
}

impl PyTransport {
    fn failed(&self, what: &str, e: &PyErr, py: Python<'_>) -> RedisSetError {
        let text = e.value(py).to_string();
        let kind = e
            .get_type(py)
            .name()
            .map_or_else(|_| String::new(), |n| n.to_string());
        if kind.contains("Connection") || kind.contains("Timeout") {
            RedisSetError::Connection {
                url: self.url.clone(),
                why: format!("{kind}: {text}"),
            }
        } else if kind.contains("Authentication") || text.contains("WRONGPASS") {
            RedisSetError::Auth {
                url: self.url.clone(),
                why: text,
            }
        } else {
            let code = text.split(' ').next().unwrap_or("");
            RedisSetError::from_reply(&self.url, what, code, &text)
        }
    }
}

impl Transport for PyTransport {
    fn url(&self) -> &str {
        &self.url
    }

    fn run(&mut self, ops: &[Op<'_>]) -> Result<Vec<Reply>, RedisSetError> {
        Python::with_gil(|py| {
            let client = self.client.bind(py);
            let attempt = || -> PyResult<Vec<Reply>> {
                let kwargs = PyDict::new(py);
                kwargs.set_item("transaction", false)?;
                let pipe = client.call_method("pipeline", (), Some(&kwargs))?;
                for op in ops {
                    match op {
                        Op::Add { key, members } => {
                            let mut args: Vec<PyObject> =
                                vec![key.into_pyobject(py)?.into_any().unbind()];
                            for m in *members {
                                args.push(m.into_pyobject(py)?.into_any().unbind());
                            }
                            pipe.call_method1("sadd", pyo3::types::PyTuple::new(py, args)?)?;
                        }
                        Op::Contains { key, members } => {
                            pipe.call_method1("smismember", (*key, members.to_vec()))?;
                        }
                        Op::Get { key } => {
                            pipe.call_method1("get", (*key,))?;
                        }
                        Op::Members { key } => {
                            pipe.call_method1("smembers", (*key,))?;
                        }
                        Op::Card { key } => {
                            pipe.call_method1("scard", (*key,))?;
                        }
                    }
                }
                let kwargs = PyDict::new(py);
                kwargs.set_item("raise_on_error", false)?;
                let results = pipe.call_method("execute", (), Some(&kwargs))?;
                let mut out = Vec::with_capacity(ops.len());
                for (op, r) in ops.iter().zip(results.try_iter()?) {
                    out.push(py_reply(op, &r?));
                }
                Ok(out)
            };
            attempt().map_err(|e| self.failed("a pipeline", &e, py))
        })
    }

    fn set_string(&mut self, key: &str, value: &str, nx: bool) -> Result<bool, RedisSetError> {
        Python::with_gil(|py| {
            let kwargs = PyDict::new(py);
            kwargs
                .set_item("nx", nx)
                .and_then(|()| {
                    self.client
                        .bind(py)
                        .call_method("set", (key, value), Some(&kwargs))
                })
                .map(|r| r.is_truthy().unwrap_or(false))
                .map_err(|e| self.failed("SET", &e, py))
        })
    }

    fn info(&mut self, section: &str) -> Result<Vec<(String, String)>, RedisSetError> {
        Python::with_gil(|py| {
            let d = self
                .client
                .bind(py)
                .call_method1("info", (section,))
                .map_err(|e| self.failed("INFO", &e, py))?;
            let text_of = |d: &Bound<'_, PyAny>| -> String {
                let mut s = String::new();
                if let Ok(d) = d.downcast::<PyDict>() {
                    for (k, v) in d.iter() {
                        s.push_str(&format!("{k}:{v}\n"));
                    }
                }
                s
            };
            let Ok(dict) = d.downcast::<PyDict>() else {
                return Ok(Vec::new());
            };
            // A cluster client answers with one dict a node.
            let per_node =
                dict.values().iter().all(|v| v.is_instance_of::<PyDict>()) && !dict.is_empty();
            if per_node {
                Ok(dict
                    .iter()
                    .map(|(k, v)| (k.to_string(), text_of(&v)))
                    .collect())
            } else {
                Ok(vec![(self.url.clone(), text_of(&d))])
            }
        })
    }

    fn set_keys(&mut self, pattern: &str) -> Result<Vec<String>, RedisSetError> {
        Python::with_gil(|py| {
            let kwargs = PyDict::new(py);
            let found = (|| -> PyResult<Vec<String>> {
                kwargs.set_item("match", pattern)?;
                kwargs.set_item("count", 10000)?;
                kwargs.set_item("_type", "SET")?;
                let it = self
                    .client
                    .bind(py)
                    .call_method("scan_iter", (), Some(&kwargs))?;
                let mut keys = Vec::new();
                for k in it.try_iter()? {
                    let k = k?;
                    if let Ok(b) = k.downcast::<PyBytes>() {
                        keys.push(String::from_utf8_lossy(b.as_bytes()).into_owned());
                    } else {
                        keys.push(k.str()?.to_string());
                    }
                }
                Ok(keys)
            })()
            .map_err(|e| self.failed("SCAN", &e, py))?;
            let mut keys = found;
            keys.sort_unstable();
            keys.dedup();
            Ok(keys)
        })
    }
}

/// The URL shown for a redis-py client: its connection's host, port and
/// database, never its password.
fn client_url(client: &Bound<'_, PyAny>, name: &str) -> String {
    let kw = client
        .getattr("connection_pool")
        .and_then(|p| p.getattr("connection_kwargs"))
        .ok();
    let get = |k: &str| -> Option<String> {
        kw.as_ref()?
            .get_item(k)
            .ok()
            .filter(|v| !v.is_none())
            .map(|v| v.to_string())
    };
    match (get("host"), get("port")) {
        (Some(h), Some(p)) => format!(
            "redis://{h}:{p}/{}?name={name} (a redis-py client)",
            get("db").unwrap_or_else(|| "0".to_owned())
        ),
        _ => format!(
            "a redis-py client ({}), name {name}",
            options::type_name(client)
        ),
    }
}

/// A seen-set in Redis shared by many clients: which URLs are new to every
/// crawler of a fleet. `add` claims: exactly one caller among all clients is
/// told a URL is new (one `SADD` on a small integer set). About 9 bytes a
/// key in Redis (docs/redis.md).
///
/// Args:
///     url_or_client (str | redis.Redis | redis.cluster.RedisCluster): a
///         URL (`redis://HOST:PORT/DB`, `?name=` allowed; a Redis Cluster
///         node is found out), batches then go through urikey's own
///         pipelined client with the GIL released; or a redis-py client,
///         whose pipelines are used.
///     profile, enable, disable, lenient, compat: the keying options of
///         `Canonicalizer`; a set refuses keys of other options.
///     name (str): the set's name, the prefix of its keys (a `?name=` in
///         the URL wins).
///     expected_keys (int | None): the keys a new set is planned for
///         (10 million when None); `urikey state grow` grows it later.
///
/// Raises:
///     ValueError: an unknown option, a set made with other options or by
///         another urikey version (the message names both), a bad URL, or
///         an evicting `maxmemory-policy`.
///     ConnectionError: Redis is unreachable or refused the password.
///     OSError: another error of Redis (a key of the name of another type).
///
/// Example:
///     >>> s = urikey.RedisSeenSet(redis_url, "crawl", name="doc-example")
///     >>> s.add(["http://a.com/x", "HTTP://A.com:80/x", "/rel"])
///     [True, False, False]
///     >>> s.add(["http://a.com/x", "http://b.com/"])
///     [False, True]
///     >>> len(s)
///     2
#[pyclass(frozen, module = "urikey", name = "RedisSeenSet")]
#[derive(Debug)]
pub struct PyRedisSeenSet {
    keying: Arc<Keying>,
    url: String,
    set: Mutex<RedisSeenSet>,
}

impl PyRedisSeenSet {
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut RedisSeenSet) -> Result<T, RedisSetError> + Send,
    ) -> PyResult<T> {
        let set = &self.set;
        py.allow_threads(|| {
            let mut guard = set.lock().map_err(|_| poisoned())?;
            f(&mut guard).map_err(set_error)
        })
    }

    /// Claims (`add`) or looks up the fingerprints `valid` of a batch of `n`.
    fn answer(
        &self,
        py: Python<'_>,
        valid: Vec<(usize, u128)>,
        n: usize,
        claim: bool,
    ) -> PyResult<Vec<bool>> {
        let fps: Vec<u128> = valid.iter().map(|v| v.1).collect();
        let got = self.with(py, move |s| {
            if claim {
                s.add_each(&fps)
            } else {
                s.contains_each(&fps)
            }
        })?;
        Ok(scatter(&valid, &got, n))
    }
}

#[pymethods]
impl PyRedisSeenSet {
    #[new]
    #[pyo3(signature = (url_or_client, profile = "rfc", *, name = "urikey", enable = None,
        disable = None, lenient = false, compat = None, expected_keys = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        url_or_client: &Bound<'_, PyAny>,
        profile: &str,
        name: &str,
        enable: Option<&Bound<'_, PyAny>>,
        disable: Option<&Bound<'_, PyAny>>,
        lenient: bool,
        compat: Option<&str>,
        expected_keys: Option<u64>,
    ) -> PyResult<Self> {
        let config = options::config(profile, enable, disable, lenient, "uri", compat)?;
        let keying = Arc::new(Keying {
            keyer: config.keyer().with_relative(Relative::Reject),
            config,
        });
        let planned = expected_keys.unwrap_or(DEFAULT_PLANNED);
        let c = keying.config.clone();
        let (set, url) = if let Ok(s) = url_or_client.downcast::<PyString>() {
            let mut text = s.to_str()?.to_owned();
            if name != DEFAULT_NAME && !text.contains("name=") {
                text.push(if text.contains('?') { '&' } else { '?' });
                text.push_str("name=");
                text.push_str(name);
            }
            let u = RedisUrl::parse(&text).map_err(set_error)?;
            let shown = u.shown().to_owned();
            let set = py
                .allow_threads(move || {
                    let client = RedisClient::connect(&u)?;
                    RedisSeenSet::open(
                        Box::new(client),
                        u.name(),
                        Some(&c),
                        Open::OrCreate(planned),
                    )
                })
                .map_err(set_error)?;
            (set, shown)
        } else if url_or_client.hasattr("pipeline")? && url_or_client.hasattr("sadd")? {
            let url = client_url(url_or_client, name);
            let t = PyTransport {
                client: url_or_client.clone().unbind(),
                url: url.clone(),
            };
            let name = name.to_owned();
            let set = py
                .allow_threads(move || {
                    RedisSeenSet::open(Box::new(t), &name, Some(&c), Open::OrCreate(planned))
                })
                .map_err(set_error)?;
            (set, url)
        } else {
            return Err(PyTypeError::new_err(format!(
                "url_or_client must be a redis:// URL or a redis-py client, not {}",
                options::type_name(url_or_client)
            )));
        };
        Ok(Self {
            keying,
            url,
            set: Mutex::new(set),
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "urikey.RedisSeenSet({:?}, {})",
            self.url,
            self.keying.repr(false)
        )
    }

    /// Claims a batch of URLs: which are new to the set (and now in it).
    ///
    /// Args:
    ///     urls (list[str | None] | Arrow array): the batch, in order.
    ///
    /// Returns:
    ///     list[bool] (an Arrow boolean array for Arrow input): True at each
    ///     line whose key no client added before (nor an earlier line of
    ///     the batch); exactly one caller among all clients gets True for a
    ///     key. False for the others, invalid lines and None.
    ///
    /// Raises:
    ///     TypeError: `urls` is not a list of str or an Arrow array.
    ///     ConnectionError: Redis is unreachable.
    ///     OSError: Redis refused a write (out of memory): the keys before
    ///         the failing command may be added, and are then reported seen
    ///         by a next call.
    ///
    /// Example:
    ///     >>> s = urikey.RedisSeenSet(redis_url, "crawl", name="doc-add")
    ///     >>> s.add(["http://a.com/x", "HTTP://A.com:80/x", None])
    ///     [True, False, False]
    fn add<'py>(&self, py: Python<'py>, urls: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let batch = Batch::read(urls)?;
        let lines = batch.lines();
        let keying = &self.keying;
        let valid = py.allow_threads(|| valid_fingerprints(keying, lines));
        let mask = self.answer(py, valid, lines.len(), true)?;
        batch.bools(py, &mask)
    }

    /// Which URLs the set holds; nothing is added.
    ///
    /// Args:
    ///     urls (list[str | None] | Arrow array): the batch.
    ///
    /// Returns:
    ///     list[bool] (an Arrow boolean array for Arrow input): True at each
    ///     line whose key the set holds.
    ///
    /// Raises:
    ///     TypeError: `urls` is not a list of str or an Arrow array.
    ///     ConnectionError: Redis is unreachable.
    ///
    /// Example:
    ///     >>> s = urikey.RedisSeenSet(redis_url, "crawl", name="doc-contains")
    ///     >>> s.add(["http://a.com/x"])
    ///     [True]
    ///     >>> s.contains(["HTTP://a.com/x", "http://c.com/"])
    ///     [True, False]
    fn contains<'py>(
        &self,
        py: Python<'py>,
        urls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let batch = Batch::read(urls)?;
        let lines = batch.lines();
        let keying = &self.keying;
        let valid = py.allow_threads(|| valid_fingerprints(keying, lines));
        let mask = self.answer(py, valid, lines.len(), false)?;
        batch.bools(py, &mask)
    }

    /// Claims a batch of 16-byte fingerprints: `add` for callers that
    /// fingerprint themselves (a Scrapy request with a body has no URL key).
    ///
    /// Args:
    ///     fingerprints (Iterable[bytes]): 16 bytes each, in the byte order
    ///         `Canonicalizer.fingerprint` returns.
    ///
    /// Returns:
    ///     list[bool]: True at each fingerprint no client added before.
    ///
    /// Raises:
    ///     TypeError: not an iterable of bytes.
    ///     ValueError: a fingerprint is not 16 bytes long (the message names
    ///         its index; nothing was added).
    ///     ConnectionError: Redis is unreachable.
    ///
    /// Example:
    ///     >>> s = urikey.RedisSeenSet(redis_url, "crawl", name="doc-fps")
    ///     >>> fp = urikey.fingerprint("http://a.com/x", "crawl")
    ///     >>> s.add_fingerprints([fp, bytes(16), fp])
    ///     [True, True, False]
    ///     >>> s.add(["HTTP://a.com/x"])
    ///     [False]
    fn add_fingerprints(
        &self,
        py: Python<'_>,
        fingerprints: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<bool>> {
        let valid = indexed_fingerprints(fingerprints)?;
        let n = valid.len();
        self.answer(py, valid, n, true)
    }

    /// Which fingerprints the set holds; nothing is added.
    ///
    /// Args:
    ///     fingerprints (Iterable[bytes]): 16 bytes each.
    ///
    /// Returns:
    ///     list[bool]: True at each fingerprint the set holds.
    ///
    /// Raises:
    ///     TypeError: not an iterable of bytes.
    ///     ValueError: a fingerprint is not 16 bytes long.
    ///     ConnectionError: Redis is unreachable.
    ///
    /// Example:
    ///     >>> s = urikey.RedisSeenSet(redis_url, "crawl", name="doc-cfps")
    ///     >>> s.add(["http://a.com/x"])
    ///     [True]
    ///     >>> s.contains_fingerprints([urikey.fingerprint("http://a.com/x", "crawl"), bytes(16)])
    ///     [True, False]
    fn contains_fingerprints(
        &self,
        py: Python<'_>,
        fingerprints: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<bool>> {
        let valid = indexed_fingerprints(fingerprints)?;
        let n = valid.len();
        self.answer(py, valid, n, false)
    }

    /// Keys in the set (counted over its buckets: one SCARD each).
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, RedisSeenSet::key_count)
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// What the set holds and how it is laid out.
    ///
    /// Returns:
    ///     dict: `url`, `name`, `keys`, `buckets`, `fullest_bucket`,
    ///     `buckets_over_intset` (past 512 members: grow the set),
    ///     `planned`, `grow_at` (keys past which to run `urikey state
    ///     grow`), `compared_bits`, `level`, `levels`, `growing`, `config`,
    ///     `identity`, `key_version`, `layout_version`, `used_memory`
    ///     (bytes, summed over the nodes; all of Redis, not only the set),
    ///     `nodes`.
    ///
    /// Raises:
    ///     ConnectionError: Redis is unreachable.
    ///
    /// Example:
    ///     >>> s = urikey.RedisSeenSet(redis_url, "crawl", name="doc-info")
    ///     >>> s.add(["http://a.com/x"])
    ///     [True]
    ///     >>> i = s.info()
    ///     >>> i["keys"], i["config"], i["compared_bits"] >= 80
    ///     (1, 'crawl', True)
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let i = self.with(py, RedisSeenSet::info)?;
        let d = PyDict::new(py);
        d.set_item("url", &i.url)?;
        d.set_item("name", &i.name)?;
        d.set_item("keys", i.keys)?;
        d.set_item("buckets", i.buckets)?;
        d.set_item("fullest_bucket", i.fullest)?;
        d.set_item("buckets_over_intset", i.over_intset)?;
        d.set_item("planned", i.meta.planned)?;
        d.set_item("grow_at", i.grow_at)?;
        d.set_item("compared_bits", i.compared_bits)?;
        d.set_item("level", i.meta.level())?;
        d.set_item("levels", i.meta.levels.clone())?;
        d.set_item("growing", i.meta.growing)?;
        d.set_item("config", &i.meta.config)?;
        d.set_item("identity", i.meta.identity.as_str())?;
        d.set_item("key_version", i.meta.key_version)?;
        d.set_item("layout_version", i.meta.layout)?;
        d.set_item("used_memory", i.used_memory)?;
        d.set_item("nodes", i.nodes)?;
        Ok(d)
    }
}
