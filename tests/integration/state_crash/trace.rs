//! A real process's file-system operations, recorded by `strace -f` and
//! read into the events a power loss can keep or lose: names made, renamed
//! and removed in a directory, bytes written to a file, and the syncs that
//! make them durable.
//!
//! Only what happens under one root directory is kept (the process also
//! reads its inputs, its libraries and `/proc`). The root's files before
//! the run are its starting point, taken as durable.

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A file or a directory of the traced tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
}

/// One operation a power loss may keep or lose.
#[derive(Clone, Debug)]
pub enum Event {
    /// `name` made in `dir` for `inode` (a new file or directory).
    Link {
        dir: usize,
        name: OsString,
        inode: usize,
    },
    /// `name` removed from `dir`.
    Unlink { dir: usize, name: OsString },
    /// `from` renamed to `to`, both in `dir`.
    Rename {
        dir: usize,
        from: OsString,
        to: OsString,
    },
    /// `data` written to `inode` at `offset`.
    Write {
        inode: usize,
        offset: u64,
        data: Vec<u8>,
    },
    /// `inode` cut (or extended with zeros) to `len` bytes.
    Truncate { inode: usize, len: u64 },
    /// `fsync` or `fdatasync` of a file: its data so far is durable.
    SyncFile { inode: usize },
    /// `fsync` of a directory: its names so far are durable.
    SyncDir { dir: usize },
}

impl Event {
    /// The directory whose names this event changes.
    pub fn dir_of(&self) -> Option<usize> {
        match self {
            Event::Link { dir, .. } | Event::Unlink { dir, .. } | Event::Rename { dir, .. } => {
                Some(*dir)
            }
            _ => None,
        }
    }

    /// The file whose data this event changes.
    pub fn file_of(&self) -> Option<usize> {
        match self {
            Event::Write { inode, .. } | Event::Truncate { inode, .. } => Some(*inode),
            _ => None,
        }
    }
}

/// The tree before the run and the events of the run.
#[derive(Clone, Debug)]
pub struct Trace {
    /// Every inode seen: the root is 0.
    pub kinds: Vec<Kind>,
    /// The names of each directory before the run.
    pub base_entries: HashMap<usize, Vec<(OsString, usize)>>,
    /// The content of each file before the run.
    pub base_data: HashMap<usize, Vec<u8>>,
    pub events: Vec<Event>,
}

/// The syscalls that change files or make them durable, and those that
/// move a descriptor's offset or copy it.
const SYSCALLS: &str = "openat,open,creat,write,pwrite64,writev,pwritev,pwritev2,lseek,\
ftruncate,truncate,fsync,fdatasync,sync,syncfs,mkdir,mkdirat,rename,renameat,renameat2,\
unlink,unlinkat,rmdir,link,linkat,symlink,symlinkat,close,dup,dup2,dup3,fcntl,fallocate,\
copy_file_range,sendfile";

/// Whether `strace` can run here.
pub fn strace_available() -> bool {
    Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs `cmd` under `strace -f`, writing the trace to `log`, with stdin
/// empty and stdout into `stdout` (a file the run writes through its
/// descriptor, as a shell's `>` gives it) or a pipe that is read and
/// dropped; returns the exit status and stderr.
pub fn record(
    cmd: &mut Command,
    log: &Path,
    stdout: Option<std::fs::File>,
) -> (std::process::ExitStatus, Vec<u8>) {
    let program = cmd.get_program().to_owned();
    let args: Vec<OsString> = cmd.get_args().map(ToOwned::to_owned).collect();
    let mut traced = Command::new("strace");
    traced
        .args(["-f", "-qq", "-y", "-xx", "-s", "16777216", "-e"])
        .arg(format!("trace={SYSCALLS}"))
        .arg("-o")
        .arg(log)
        .arg("--")
        .arg(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    if let Some(dir) = cmd.get_current_dir() {
        traced.current_dir(dir);
    }
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => traced.env(k, v),
            None => traced.env_remove(k),
        };
    }
    match stdout {
        Some(f) => {
            traced.stdout(f);
            let out = traced.output().expect("strace runs");
            (out.status, out.stderr)
        }
        None => {
            traced.stdout(std::process::Stdio::piped());
            let out = traced.output().expect("strace runs");
            (out.status, out.stderr)
        }
    }
}

/// Decodes strace's `-xx` strings (`\x41\x42`) and plain text.
fn unescape(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len() / 4);
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            match b[i + 1] {
                b'x' if i + 3 < b.len() + 1 => {
                    let hex = std::str::from_utf8(&b[i + 2..i + 4]).expect("ascii");
                    out.push(u8::from_str_radix(hex, 16).expect("hex escape"));
                    i += 4;
                }
                b'n' => {
                    out.push(b'\n');
                    i += 2;
                }
                b't' => {
                    out.push(b'\t');
                    i += 2;
                }
                b'\\' => {
                    out.push(b'\\');
                    i += 2;
                }
                b'"' => {
                    out.push(b'"');
                    i += 2;
                }
                c => {
                    out.push(c);
                    i += 2;
                }
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// One argument of a syscall line: a number, a string, a descriptor with
/// its path (`3</a/b>`), flags, or a structure kept as text.
#[derive(Clone, Debug)]
enum Arg {
    Text(String),
    Str(Vec<u8>),
    Fd(i64, PathBuf),
}

impl Arg {
    fn str(&self) -> &[u8] {
        match self {
            Arg::Str(s) => s,
            other => panic!("not a string: {other:?}"),
        }
    }

    fn path(&self) -> PathBuf {
        PathBuf::from(OsString::from_vec(self.str().to_vec()))
    }

    fn fd(&self) -> Option<(i64, PathBuf)> {
        match self {
            Arg::Fd(n, p) => Some((*n, p.clone())),
            _ => None,
        }
    }

    fn text(&self) -> &str {
        match self {
            Arg::Text(t) => t,
            _ => "",
        }
    }

    fn number(&self) -> i64 {
        self.text().parse().expect("a number")
    }
}

/// Splits the arguments of `name(args) = ret` at top-level commas.
fn split_args(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut parts = Vec::new();
    let (mut depth, mut in_str, mut start, mut i) = (0i32, false, 0usize, 0usize);
    while i < b.len() {
        let c = b[i];
        if in_str {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_str = false;
            }
        } else {
            match c {
                b'"' => in_str = true,
                b'[' | b'{' | b'<' => depth += 1,
                b']' | b'}' | b'>' => depth -= 1,
                b',' if depth == 0 => {
                    parts.push(s[start..i].trim().to_owned());
                    start = i + 1;
                }
                _ => {}
            }
        }
        i += 1;
    }
    if !s[start..].trim().is_empty() {
        parts.push(s[start..].trim().to_owned());
    }
    parts
}

fn parse_arg(s: &str) -> Arg {
    let s = s.trim();
    // Strings, perhaps cut (`"..."...`): a cut one is kept as far as it goes.
    if let Some(rest) = s.strip_prefix('"') {
        let end = rest.rfind('"').unwrap_or(rest.len());
        return Arg::Str(unescape(&rest[..end]));
    }
    if let Some(lt) = s.find('<') {
        let head = &s[..lt];
        let n = if head == "AT_FDCWD" {
            -100
        } else {
            head.parse().unwrap_or(i64::MIN)
        };
        if n != i64::MIN && s.ends_with('>') {
            let inner = &s[lt + 1..s.len() - 1];
            return Arg::Fd(n, PathBuf::from(OsString::from_vec(unescape(inner))));
        }
    }
    Arg::Text(s.to_owned())
}

/// A parsed line: the syscall, its arguments, its result (with the
/// result's path for a new descriptor).
struct Call {
    name: String,
    args: Vec<Arg>,
    ret: i64,
    ret_path: Option<PathBuf>,
}

fn parse_call(line: &str) -> Option<Call> {
    let open = line.find('(')?;
    let name = line[..open].trim().to_owned();
    // strace pads short calls before ` = `.
    let eq = line.rfind(" = ")?;
    let call = line[..eq].trim_end().strip_suffix(')')?;
    let args = split_args(call.get(open + 1..)?)
        .iter()
        .map(|a| parse_arg(a))
        .collect();
    let ret_text = line[eq + 3..].split(' ').next()?.to_owned();
    let (ret, ret_path) = match parse_arg(&ret_text) {
        Arg::Fd(n, p) => (n, Some(p)),
        Arg::Text(t) => (t.parse().ok()?, None),
        Arg::Str(_) => return None,
    };
    Some(Call {
        name,
        args,
        ret,
        ret_path,
    })
}

/// The lines of a `strace -f` log, each whole (an `<unfinished ...>` call
/// joined with its `<... resumed>` end, at the place of the end).
fn whole_lines(log: &str) -> Vec<String> {
    let mut pending: HashMap<String, String> = HashMap::new();
    let mut out = Vec::new();
    for line in log.lines() {
        let Some((pid, rest)) = line.split_once(' ') else {
            continue;
        };
        let rest = rest.trim_start();
        if let Some(start) = rest.strip_suffix(" <unfinished ...>") {
            pending.insert(pid.to_owned(), start.to_owned());
        } else if let Some(resumed) = rest.strip_prefix("<... ") {
            let Some(at) = resumed.find(" resumed>") else {
                continue;
            };
            let tail = &resumed[at + " resumed>".len()..];
            if let Some(start) = pending.remove(pid) {
                out.push(format!("{start}{tail}"));
            }
        } else if !rest.starts_with("---") && !rest.starts_with("+++") {
            out.push(rest.to_owned());
        }
    }
    out
}

/// Reads the trace of a run under `root`, whose tree before the run was
/// `base` (see [`snapshot`]).
/// `cwd` is the run's working directory.
pub fn parse(log: &str, root: &Path, cwd: &Path, base: Snapshot) -> Trace {
    Reader::new(root, cwd, base).read(log)
}

/// The tree under a root before a run.
#[derive(Clone, Debug)]
pub struct Snapshot {
    kinds: Vec<Kind>,
    paths: HashMap<PathBuf, usize>,
    entries: HashMap<usize, Vec<(OsString, usize)>>,
    data: HashMap<usize, Vec<u8>>,
}

/// The tree under `root` (canonical), files and directories.
pub fn snapshot(root: &Path) -> Snapshot {
    let mut s = Snapshot {
        kinds: vec![Kind::Dir],
        paths: HashMap::from([(root.to_owned(), 0)]),
        entries: HashMap::from([(0, Vec::new())]),
        data: HashMap::new(),
    };
    fn walk(s: &mut Snapshot, dir: &Path, inode: usize) {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .expect("readable")
            .map(|e| e.expect("entry"))
            .collect();
        names.sort_by_key(std::fs::DirEntry::file_name);
        for e in names {
            let id = s.kinds.len();
            let path = e.path();
            let is_dir = e.file_type().expect("type").is_dir();
            s.kinds.push(if is_dir { Kind::Dir } else { Kind::File });
            s.paths.insert(path.clone(), id);
            s.entries
                .get_mut(&inode)
                .expect("a dir")
                .push((e.file_name(), id));
            if is_dir {
                s.entries.insert(id, Vec::new());
                walk(s, &path, id);
            } else {
                s.data.insert(id, std::fs::read(&path).expect("readable"));
            }
        }
    }
    walk(&mut s, root, 0);
    s
}

/// An open file description: the inode and the offset.
struct Description {
    inode: usize,
    offset: u64,
}

struct Reader {
    root: PathBuf,
    cwd: PathBuf,
    kinds: Vec<Kind>,
    /// The tree's names as the run goes, every event applied.
    paths: HashMap<PathBuf, usize>,
    base_entries: HashMap<usize, Vec<(OsString, usize)>>,
    base_data: HashMap<usize, Vec<u8>>,
    /// Descriptor number to description; dups share one.
    fds: HashMap<i64, usize>,
    descriptions: Vec<Description>,
    sizes: HashMap<usize, u64>,
    events: Vec<Event>,
}

impl Reader {
    fn new(root: &Path, cwd: &Path, base: Snapshot) -> Self {
        let sizes = base
            .data
            .iter()
            .map(|(&i, d)| (i, d.len() as u64))
            .collect();
        Self {
            root: root.to_owned(),
            cwd: cwd.to_owned(),
            kinds: base.kinds,
            paths: base.paths,
            base_entries: base.entries,
            base_data: base.data,
            fds: HashMap::new(),
            descriptions: Vec::new(),
            sizes,
            events: Vec::new(),
        }
    }

    fn read(mut self, log: &str) -> Trace {
        for line in whole_lines(log) {
            if let Some(call) = parse_call(&line) {
                if call.ret >= 0 {
                    self.call(&call);
                }
            }
        }
        Trace {
            kinds: self.kinds,
            base_entries: self.base_entries,
            base_data: self.base_data,
            events: self.events,
        }
    }

    fn under_root(&self, p: &Path) -> bool {
        p.starts_with(&self.root)
    }

    /// `path` (absolute, or relative to the descriptor `at`'s directory).
    fn resolve(&self, at: Option<&Arg>, path: &Path) -> PathBuf {
        if path.is_absolute() {
            return normalize(path);
        }
        let base = at
            .and_then(Arg::fd)
            .map_or_else(|| self.cwd.clone(), |(_, p)| p);
        normalize(&base.join(path))
    }

    fn dir_and_name(&self, path: &Path) -> Option<(usize, OsString)> {
        let parent = path.parent()?;
        let dir = *self.paths.get(parent)?;
        Some((dir, path.file_name()?.to_owned()))
    }

    /// The description of descriptor `fd` (whose path strace printed),
    /// made on first use for a descriptor the run inherited (stdout).
    fn description(&mut self, fd: i64, path: &Path) -> Option<usize> {
        if let Some(&d) = self.fds.get(&fd) {
            return Some(d);
        }
        let inode = *self.paths.get(path)?;
        let d = self.descriptions.len();
        self.descriptions.push(Description { inode, offset: 0 });
        self.fds.insert(fd, d);
        Some(d)
    }

    fn write(&mut self, d: usize, offset: Option<u64>, data: Vec<u8>) {
        let desc = &mut self.descriptions[d];
        let at = offset.unwrap_or(desc.offset);
        if offset.is_none() {
            desc.offset += data.len() as u64;
        }
        let inode = desc.inode;
        let size = self.sizes.entry(inode).or_insert(0);
        *size = (*size).max(at + data.len() as u64);
        self.events.push(Event::Write {
            inode,
            offset: at,
            data,
        });
    }

    fn call(&mut self, c: &Call) {
        let a = &c.args;
        match c.name.as_str() {
            "openat" | "open" | "creat" => {
                let Some(path) = c.ret_path.clone() else {
                    return;
                };
                if !self.under_root(&path) {
                    return;
                }
                let flags = if c.name == "creat" {
                    "O_CREAT|O_TRUNC".to_owned()
                } else {
                    a.get(if c.name == "openat" { 2 } else { 1 })
                        .map(|f| f.text().to_owned())
                        .unwrap_or_default()
                };
                let inode = match self.paths.get(&path) {
                    Some(&i) => {
                        if flags.contains("O_TRUNC") && self.kinds[i] == Kind::File {
                            self.sizes.insert(i, 0);
                            self.events.push(Event::Truncate { inode: i, len: 0 });
                        }
                        i
                    }
                    None => {
                        let Some((dir, name)) = self.dir_and_name(&path) else {
                            return;
                        };
                        let i = self.kinds.len();
                        self.kinds.push(Kind::File);
                        self.paths.insert(path.clone(), i);
                        self.sizes.insert(i, 0);
                        self.events.push(Event::Link {
                            dir,
                            name,
                            inode: i,
                        });
                        i
                    }
                };
                let offset = if flags.contains("O_APPEND") {
                    self.sizes.get(&inode).copied().unwrap_or(0)
                } else {
                    0
                };
                let d = self.descriptions.len();
                self.descriptions.push(Description { inode, offset });
                self.fds.insert(c.ret, d);
            }
            "write" | "pwrite64" | "writev" | "pwritev" | "pwritev2" => {
                let Some((fd, path)) = a.first().and_then(Arg::fd) else {
                    return;
                };
                if !self.under_root(&path) {
                    return;
                }
                let Some(d) = self.description(fd, &path) else {
                    return;
                };
                let mut data = match c.name.as_str() {
                    "write" | "pwrite64" => a[1].str().to_vec(),
                    _ => iov_data(a[1].text()),
                };
                data.truncate(usize::try_from(c.ret).expect("a count"));
                let offset = match c.name.as_str() {
                    "pwrite64" | "pwritev" | "pwritev2" => {
                        Some(u64::try_from(a[3].number()).expect("an offset"))
                    }
                    _ => None,
                };
                self.write(d, offset, data);
            }
            "lseek" => {
                if let Some((fd, path)) = a.first().and_then(Arg::fd) {
                    if let Some(d) = self
                        .under_root(&path)
                        .then(|| self.description(fd, &path))
                        .flatten()
                    {
                        self.descriptions[d].offset = u64::try_from(c.ret).expect("an offset");
                    }
                }
            }
            "ftruncate" => {
                if let Some((fd, path)) = a.first().and_then(Arg::fd) {
                    if let Some(d) = self
                        .under_root(&path)
                        .then(|| self.description(fd, &path))
                        .flatten()
                    {
                        let inode = self.descriptions[d].inode;
                        let len = u64::try_from(a[1].number()).expect("a length");
                        self.sizes.insert(inode, len);
                        self.events.push(Event::Truncate { inode, len });
                    }
                }
            }
            "fsync" | "fdatasync" => {
                if let Some((fd, path)) = a.first().and_then(Arg::fd) {
                    if let Some(d) = self
                        .under_root(&path)
                        .then(|| self.description(fd, &path))
                        .flatten()
                    {
                        let inode = self.descriptions[d].inode;
                        self.events.push(match self.kinds[inode] {
                            Kind::Dir => Event::SyncDir { dir: inode },
                            Kind::File => Event::SyncFile { inode },
                        });
                    }
                }
            }
            "sync" | "syncfs" => panic!("the run called {}: not modelled", c.name),
            "mkdir" | "mkdirat" => {
                let (at, p) = if c.name == "mkdir" {
                    (None, &a[0])
                } else {
                    (Some(&a[0]), &a[1])
                };
                let path = self.resolve(at, &p.path());
                if !self.under_root(&path) {
                    return;
                }
                let Some((dir, name)) = self.dir_and_name(&path) else {
                    panic!("mkdir {}: no parent in the tree", path.display());
                };
                let i = self.kinds.len();
                self.kinds.push(Kind::Dir);
                self.paths.insert(path, i);
                self.events.push(Event::Link {
                    dir,
                    name,
                    inode: i,
                });
            }
            "rename" | "renameat" | "renameat2" => {
                let (from, to) = if c.name == "rename" {
                    (
                        self.resolve(None, &a[0].path()),
                        self.resolve(None, &a[1].path()),
                    )
                } else {
                    (
                        self.resolve(Some(&a[0]), &a[1].path()),
                        self.resolve(Some(&a[2]), &a[3].path()),
                    )
                };
                if !self.under_root(&from) && !self.under_root(&to) {
                    return;
                }
                let (Some((dir, from_name)), Some((to_dir, to_name))) =
                    (self.dir_and_name(&from), self.dir_and_name(&to))
                else {
                    panic!(
                        "rename {} {}: not in the tree",
                        from.display(),
                        to.display()
                    );
                };
                assert_eq!(dir, to_dir, "a rename across directories is not modelled");
                let inode = self.paths.remove(&from).expect("a known file");
                // Paths below a renamed directory are not followed.
                self.paths.insert(to, inode);
                self.events.push(Event::Rename {
                    dir,
                    from: from_name,
                    to: to_name,
                });
            }
            "unlink" | "unlinkat" | "rmdir" => {
                let path = if c.name == "unlinkat" {
                    self.resolve(Some(&a[0]), &a[1].path())
                } else {
                    self.resolve(None, &a[0].path())
                };
                if !self.under_root(&path) {
                    return;
                }
                let Some((dir, name)) = self.dir_and_name(&path) else {
                    panic!("unlink {}: not in the tree", path.display());
                };
                self.paths.remove(&path);
                self.events.push(Event::Unlink { dir, name });
            }
            "link" | "linkat" | "symlink" | "symlinkat" | "fallocate" | "copy_file_range"
            | "sendfile" | "truncate" => {
                let touches_root = a.iter().any(|x| match x {
                    Arg::Fd(_, p) => self.under_root(p),
                    Arg::Str(_) => self.under_root(&self.resolve(None, &x.path())),
                    Arg::Text(_) => false,
                });
                assert!(!touches_root, "the run called {}: not modelled", c.name);
            }
            "close" => {
                if let Some((fd, _)) = a.first().and_then(Arg::fd) {
                    self.fds.remove(&fd);
                } else if let Ok(fd) = a[0].text().parse::<i64>() {
                    self.fds.remove(&fd);
                }
            }
            "dup" | "dup2" | "dup3" | "fcntl" => {
                let Some((fd, path)) = a.first().and_then(Arg::fd) else {
                    return;
                };
                if c.name == "fcntl" && !a[1].text().starts_with("F_DUPFD") {
                    return;
                }
                if !self.under_root(&path) {
                    return;
                }
                if let Some(d) = self.description(fd, &path) {
                    self.fds.insert(c.ret, d);
                }
            }
            _ => {}
        }
    }
}

/// The bytes of a `writev` argument: `[{iov_base="..", iov_len=N}, ...]`.
fn iov_data(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("iov_base=\"") {
        let s = &rest[at + "iov_base=\"".len()..];
        let mut end = 0;
        let b = s.as_bytes();
        while end < b.len() && b[end] != b'"' {
            end += if b[end] == b'\\' { 2 } else { 1 };
        }
        out.extend(unescape(&s[..end]));
        rest = &s[end..];
    }
    out
}

/// `p` without `.` and `..` parts (the tree has no symbolic links).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_trace_lines_are_read() {
        let padded = parse_call(r#"mkdir("\x61", 0777)     = 0"#).expect("a call");
        assert_eq!((padded.args[0].str(), padded.ret), (&b"a"[..], 0));
        let line = r#"openat(AT_FDCWD<\x2f\x72>, "\x73\x2f\x4c", O_RDWR|O_CREAT|O_CLOEXEC, 0666) = 3<\x2f\x72\x2f\x73\x2f\x4c>"#;
        let c = parse_call(line).expect("a call");
        assert_eq!(c.name, "openat");
        assert_eq!(c.ret, 3);
        assert_eq!(c.ret_path, Some(PathBuf::from("/r/s/L")));
        assert_eq!(c.args[1].str(), b"s/L");
        let joined = whole_lines("1 write(3<\\x2f>, \"\\x41\", 1 <unfinished ...>\n2 close(4) = 0\n1 <... write resumed>) = 1\n");
        assert_eq!(
            joined,
            ["close(4) = 0", "write(3<\\x2f>, \"\\x41\", 1) = 1"]
        );
        assert_eq!(
            iov_data(r#"[{iov_base="\x61\x62", iov_len=2}, {iov_base="\x63", iov_len=1}]"#),
            b"abc"
        );
    }
}
