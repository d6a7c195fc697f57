//! The memory limit: parsed from a size (`512M`, `4G`), or by default a
//! share of what the machine (or the cgroup) allows, and how much of it
//! the seen-set may take; and whether reserving address space is free.

/// Share of physical memory a run may use by default: half, since the
/// page cache and other processes need the rest.
const PHYSICAL_SHARE: (u64, u64) = (1, 2);

/// Share of a cgroup's memory limit a run may use by default: the page
/// cache of the files it writes is charged to the cgroup too.
const CGROUP_SHARE: (u64, u64) = (3, 4);

/// How far above the limit a run may go: room for what it uses besides
/// the seen-set (chunks in flight with their line records, the writer's
/// buffer, partition buffers once spilling; see [`budget`]).
pub const SLACK: u64 = 64 << 20;

/// Parses a size: a number of bytes with an optional binary suffix `K`,
/// `M`, `G` or `T` (`KiB`, `MB` and the like are read the same way).
///
/// # Errors
/// A message for anything else.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("not a size: {text:?} (try 512M or 4G)"))?;
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(format!("not a size: {text:?} (try 512M or 4G)")),
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("size too large: {text:?}"))
}

/// The default memory limit: half of physical memory, or three quarters
/// of the cgroup's limit when that is lower; `None` when neither can be
/// read.
pub fn default_limit() -> Option<u64> {
    let physical = physical().map(|b| b / PHYSICAL_SHARE.1 * PHYSICAL_SHARE.0);
    let cgroup = [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .find_map(|p| std::fs::read_to_string(p).ok())
    .and_then(|t| t.trim().parse::<u64>().ok())
    .map(|b| b / CGROUP_SHARE.1 * CGROUP_SHARE.0);
    match (physical, cgroup) {
        (Some(p), Some(c)) => Some(p.min(c)),
        (p, c) => p.or(c),
    }
}

/// The capacity, in elements, of a vector of capacity `capacity` once it
/// holds `need` elements: it doubles when it is full (or grows to what it
/// needs, if more).
pub fn grown_capacity(capacity: usize, need: usize) -> usize {
    if need <= capacity {
        capacity
    } else {
        need.max(capacity.saturating_mul(2))
    }
}

/// Physical memory (`MemTotal` of `/proc/meminfo`), in bytes; `None` where
/// it cannot be read.
pub fn physical() -> Option<u64> {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| mem_total(&t))
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// True when address space that is reserved but never touched costs
/// nothing: no limit on the process's address space (`ulimit -v`), and
/// no strict overcommit policy, which counts every private writable map
/// (`vm.overcommit_memory` 2). Read once. False where either cannot be
/// read: only Linux is known to be generous.
pub fn address_space_is_free() -> bool {
    static FREE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FREE.get_or_init(|| {
        let limits = std::fs::read_to_string("/proc/self/limits").ok();
        let overcommit = std::fs::read_to_string("/proc/sys/vm/overcommit_memory").ok();
        match (limits, overcommit) {
            (Some(l), Some(o)) => address_space_unlimited(&l) && o.trim() != "2",
            _ => false,
        }
    })
}

/// True when the `Max address space` line of `/proc/self/limits` says
/// `unlimited` (its soft limit, the first column).
fn address_space_unlimited(limits: &str) -> bool {
    limits
        .lines()
        .find_map(|l| l.strip_prefix("Max address space"))
        .and_then(|rest| rest.split_whitespace().next())
        == Some("unlimited")
}

/// The bytes the seen-set may take under `limit` when the rest of the run
/// takes `working` bytes: the limit, less what of `working` does not fit in
/// [`SLACK`], so that the peak stays within the limit plus `SLACK` (and a
/// limit of 0 spills from the start).
pub fn budget(limit: u64, working: u64) -> u64 {
    limit.saturating_sub(working.saturating_sub(SLACK))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_budget() {
        assert_eq!(budget(0, 40 << 20), 0);
        assert_eq!(budget(1 << 30, 40 << 20), 1 << 30);
        assert_eq!(budget(1 << 30, 100 << 20), (1 << 30) - (36 << 20));
        assert_eq!(budget(10 << 20, 100 << 20), 0);
    }

    #[test]
    fn memory_parse_size() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("123"), Ok(123));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("3 MB"), Ok(3 << 20));
        assert!(parse_size("").is_err());
        assert!(parse_size("1.5G").is_err());
        assert!(parse_size("12Q").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    #[test]
    fn memory_mem_total() {
        let t = "MemTotal:       24684096 kB\nMemFree:  1 kB\n";
        assert_eq!(mem_total(t), Some(24_684_096 * 1024));
        assert_eq!(mem_total("nothing"), None);
    }

    #[test]
    fn memory_address_space_limit() {
        let head =
            "Limit                     Soft Limit           Hard Limit           Units     \n";
        let free =
            "Max address space         unlimited            unlimited            bytes     \n";
        let capped =
            "Max address space         4096000000           unlimited            bytes     \n";
        assert!(address_space_unlimited(&format!("{head}{free}")));
        assert!(!address_space_unlimited(&format!("{head}{capped}")));
        assert!(!address_space_unlimited(head));
    }

    #[test]
    fn memory_default_limit_is_sane() {
        if let Some(l) = default_limit() {
            assert!(l > 1 << 20);
        }
    }
}
