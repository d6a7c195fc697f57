//! Peak memory of the process, for the run statistics (`--stats`, Python's
//! `dedup_file`).

/// The process's peak resident set size (`VmHWM` in `/proc/self/status`),
/// when the platform reports it.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_hwm(&status)
}

fn parse_vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kb.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rss_parses_vm_hwm() {
        assert_eq!(
            parse_vm_hwm("Name:\tx\nVmHWM:\t  2048 kB\nVmRSS: 1 kB\n"),
            Some(2 << 20)
        );
        assert_eq!(parse_vm_hwm("Name:\tx\n"), None);
    }
}
