use super::bucket::*;
use super::memory::*;
use super::rebuild::*;
use super::table::*;
use crate::uri::key::fingerprint;
use std::collections::HashMap;

/// The next of a xorshift sequence: uniform enough for test fingerprints.
fn xorshift(mut x: u64) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

/// `n` xorshift fingerprints from `seed`; the low bits of every
/// `every`-th are `crowd(i, x)` instead (a crowd of shared homes), and
/// every `repeat`-th is followed by a repeat of an earlier one.
fn crowded_fps(
    n: u64,
    seed: u64,
    every: u64,
    repeat: u64,
    crowd: impl Fn(u64, u64) -> u64,
) -> Vec<u128> {
    let mut fps = Vec::new();
    let mut x = seed;
    for i in 0..n {
        x = xorshift(x);
        let lo = if i % every == 0 { crowd(i, x) } else { x };
        fps.push((u128::from(x.rotate_left(17)) << 64) | u128::from(lo));
        if i % repeat == 0 {
            fps.push(fps[(x % fps.len() as u64) as usize]);
        }
    }
    fps
}

/// Inserts `fps` one by one and checks every answer against a map.
fn check_against_map<const WITH_IDS: bool>(t: &mut FingerprintTable<WITH_IDS>, fps: &[u128]) {
    let mut want: HashMap<u128, u32> = HashMap::new();
    for &fp in fps {
        insert_checked(t, fp, &mut want);
    }
    check_finds(t, &want);
}

/// Inserts `fp` and checks the answer against `want`, the ids given so
/// far (in order of first insert), which it then follows.
fn insert_checked<const WITH_IDS: bool>(
    t: &mut FingerprintTable<WITH_IDS>,
    fp: u128,
    want: &mut HashMap<u128, u32>,
) {
    let next = want.len() as u32;
    let got = t.insert(fp);
    match want.get(&fp) {
        Some(&id) => assert_eq!(got, Insert::Seen(if WITH_IDS { id } else { 0 })),
        None => {
            assert_eq!(got, Insert::New(if WITH_IDS { next } else { 0 }));
            want.insert(fp, next);
        }
    }
}

/// The table holds exactly the fingerprints of `want`, with their ids.
fn check_finds<const WITH_IDS: bool>(t: &FingerprintTable<WITH_IDS>, want: &HashMap<u128, u32>) {
    assert_eq!(t.len(), want.len());
    for (&fp, &id) in want {
        assert_eq!(t.find(fp), Some(if WITH_IDS { id } else { 0 }));
    }
}

#[test]
fn fpset_insert_contains_grow() {
    let mut t = FingerprintTable::<false>::default();
    let n = 10_000u32;
    for i in 0..n {
        let fp = fingerprint(&i.to_le_bytes());
        assert!(!t.contains(fp));
        assert!(t.insert(fp).is_new());
        assert!(t.contains(fp));
        assert!(!t.insert(fp).is_new());
    }
    assert_eq!(t.len(), n as usize);
    assert!(t.slots.len() >= MIN_BUCKETS * 64, "the table grew");
    assert!(!t.contains(fingerprint(b"absent")));
    assert!(t.filled <= max_filled(t.slots.len()));
}

#[test]
fn fpset_grows_in_place_past_huge_pages() {
    // Past 2 MiB (32768 buckets) tables grow inside their own map.
    let fps: Vec<u128> = (0..700_000u32)
        .map(|i| fingerprint(&(i % 600_000).to_le_bytes()))
        .collect();
    for phase in [0, 5, 15] {
        let mut t = FingerprintTable::<true>::with_phase(phase);
        check_against_map(&mut t, &fps);
        assert!(
            t.slots.len() * BUCKET > 2 * HUGE_PAGE,
            "several in-place steps"
        );
        assert_eq!(t.slots.len() % PAGE_BUCKETS, 0, "whole huge pages");
        assert!(matches!(t.slots.mem, SlotMemory::Map { .. }));
        assert!(!t.contains(fingerprint(b"absent")));
    }
}

/// The `VmFlags` line of the mapping that holds `addr`, from
/// `/proc/self/smaps`.
#[cfg(target_os = "linux")]
fn vm_flags(addr: usize) -> Option<String> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut inside = false;
    for line in smaps.lines() {
        let range = line.split_whitespace().next().and_then(|r| {
            let (a, b) = r.split_once('-')?;
            Some((
                usize::from_str_radix(a, 16).ok()?,
                usize::from_str_radix(b, 16).ok()?,
            ))
        });
        if let Some((a, b)) = range.filter(|_| !line.starts_with("VmFlags")) {
            inside = (a..b).contains(&addr);
        } else if inside && line.starts_with("VmFlags:") {
            return Some(line.to_owned());
        }
    }
    None
}

#[test]
#[cfg(target_os = "linux")]
fn fpset_small_pages_up_to_huge_from_then_huge_pages() {
    if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
        eprintln!("no transparent huge pages on this system: nothing to check");
        return;
    }
    let mut t = FingerprintTable::<false>::with_phase(0);
    let mut i = 0u32;
    let mut small_seen = false;
    while t.slots.len() * BUCKET <= HUGE_FROM {
        t.insert(fingerprint(&i.to_le_bytes()));
        i += 1;
        if let SlotMemory::Map { huge, bytes, .. } = &t.slots.mem {
            if *bytes >= HUGE_PAGE && *bytes < HUGE_FROM {
                assert!(!huge, "small pages below HUGE_FROM");
                small_seen = true;
            }
        }
    }
    assert!(
        small_seen,
        "the table passed through a size below HUGE_FROM"
    );
    let SlotMemory::Map {
        map,
        offset,
        bytes,
        huge,
    } = &t.slots.mem
    else {
        panic!("a table of {} bytes in a map", t.slots.len() * BUCKET);
    };
    assert!(*huge && *bytes > HUGE_FROM);
    let start = map.as_ptr() as usize + offset;
    let end = start + bytes - 1;
    let flags = |a| vm_flags(a).unwrap_or_default();
    // `hg`: MADV_HUGEPAGE given; the first part was faulted in before.
    assert!(!flags(start).contains(" hg"), "{}", flags(start));
    assert!(flags(end).contains(" hg"), "{}", flags(end));
    assert!(t.contains(fingerprint(&0u32.to_le_bytes())));
}

#[test]
fn fpset_two_buckets_then_the_chain_past_the_home() {
    // Twelve fingerprints with the same home and the same second bucket
    // (same low 64 bits, same top bits of 64..96): the first ten fill
    // the two buckets, taking the emptier (the home when even), the
    // last two go on past the home, which is marked overflowed.
    let mut t = FingerprintTable::<true>::default();
    let lo = u64::MAX / 3;
    let fps: Vec<u128> = (0..12u128).map(|j| (j << 64) | u128::from(lo)).collect();
    for (id, &fp) in fps.iter().enumerate() {
        assert_eq!(t.insert(fp), Insert::New(id as u32));
    }
    let len = t.slots.len();
    let h = home(lo, len);
    let s = second(h, Kept::of(fps[0]));
    assert_eq!(s, second(h, Kept::of(fps[11])), "one second bucket");
    assert_eq!(s / GROUP, h / GROUP, "in the home's group");
    let bytes = t.slots.bytes();
    let places: Vec<usize> = fps
        .iter()
        .map(|&fp| match probe(bytes, len, Kept::of(fp)) {
            Probe::Found { b, .. } => b,
            Probe::Absent => usize::MAX,
        })
        .collect();
    let alternating: Vec<usize> = (0..10).map(|i| if i % 2 == 0 { h } else { s }).collect();
    assert_eq!(places[..10], alternating[..]);
    assert!(places[10..]
        .iter()
        .all(|&b| b != h && b != s && b != usize::MAX));
    assert!(Bucket::at(bytes, h).overflowed());
    assert!(!Bucket::at(bytes, s).overflowed());
    // A thirteenth with the same home is absent; all twelve are found
    // with their ids, here and after the table grows.
    assert_eq!(t.find((99 << 64) | u128::from(lo)), None);
    for _ in 0..2 {
        for (id, &fp) in fps.iter().enumerate() {
            assert_eq!(t.find(fp), Some(id as u32));
        }
        t.grow();
    }
}

#[test]
fn fpset_grows_in_place_past_eight_times_its_first_map() {
    // From its first huge page to more than 8 times that, a table stays
    // in the map it started in (`RESERVE_BYTES`), where the system lets
    // it reserve that much.
    if !crate::engine::memory::address_space_is_free() {
        return;
    }
    let mut t = FingerprintTable::<false>::with_phase(4);
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut start = None;
    let mut n = 0u64;
    while t.slots.len() * BUCKET <= 9 * HUGE_PAGE {
        x = xorshift(x);
        assert!(t
            .insert((u128::from(x) << 64) | u128::from(x.rotate_left(29)))
            .is_new());
        n += 1;
        if let SlotMemory::Map { map, .. } = &t.slots.mem {
            if t.slots.len() >= PAGE_BUCKETS {
                assert_eq!(*start.get_or_insert(map.as_ptr()), map.as_ptr(), "same map");
            }
        }
    }
    assert!(start.is_some());
    assert_eq!(t.len() as u64, n);
}

#[cfg(target_os = "linux")]
#[test]
fn fpset_populate_splits_on_pool_threads_and_keeps_zeros() {
    let len = 3 * POPULATE_PIECE + HUGE_PAGE;
    let mut map = memmap2::MmapMut::map_anon(len).expect("anonymous map");
    map[5] = 7;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("pool");
    pool.install(|| populate(&map, 0, len));
    populate(&map, HUGE_PAGE, len - HUGE_PAGE);
    assert_eq!(map[5], 7, "faulting in keeps what was written");
    assert!(map.iter().enumerate().all(|(i, &b)| b == 0 || i == 5));
    map[len - 1] = 1;
}

#[test]
fn fpset_growth_keeps_wrapped_and_displaced_clusters() {
    let mut fps = Vec::new();
    // 40 fingerprints whose home is the last bucket at every length: a
    // cluster that wraps around the end of every table, small (heap)
    // or grown in place.
    for j in 0..40u64 {
        fps.push((u128::from(j) << 64) | u128::from(u64::MAX - j % 3));
    }
    // 40 whose home is the first bucket: displaced far from a home
    // near the start, so a rebuild in place must set them aside.
    for j in 0..40u64 {
        fps.push((u128::from(j + 100) << 64) | u128::from(j));
    }
    // Homes that go down as they are inserted.
    for j in 0..300u64 {
        fps.push((u128::from(j + 1000) << 64) | u128::from(u64::MAX / 2 - (j << 48)));
    }
    for i in 0..400_000u32 {
        fps.push(fingerprint(&i.to_le_bytes()));
    }
    let mut t = FingerprintTable::<true>::default();
    check_against_map(&mut t, &fps);
    assert!(t.slots.len() * BUCKET > 2 * HUGE_PAGE, "grown in place too");
    let mut f = FingerprintTable::<false>::with_phase(7);
    check_against_map(&mut f, &fps);
    assert!(!f.contains((999 << 64) | u128::from(u64::MAX)));
}

#[test]
fn fpset_split_rebuild_on_a_pool_keeps_every_entry() {
    // Enough fingerprints that the growths from 2 MiB on rebuild in two
    // parts (`SPLIT_REBUILD_BYTES` in tests), with crowds of shared
    // homes where the parts split (half the table), where the lower
    // part's entries end (near 0.65), around those, and at the end.
    let fps = crowded_fps(300_000, 0x2545_f491_4f6c_dd1d, 50, 4, |i, x| {
        let at = [45, 50, 55, 60, 65, 70, 100][((i / 50) % 7) as usize];
        (u64::MAX / 100 * at).wrapping_sub(x & 0xffff)
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("pool");
    pool.install(|| {
        let mut t = FingerprintTable::<true>::with_phase(9);
        check_against_map(&mut t, &fps);
        let old = t.slots.len();
        assert!(
            split_point(old, next_len(old, 9), 4 * SLOTS).is_some(),
            "the last growths split"
        );
        let mut f = FingerprintTable::<false>::with_phase(2);
        check_against_map(&mut f, &fps);
        assert!(!f.contains(fingerprint(b"absent")));
    });
}

#[test]
fn fpset_expected_size_is_reached_in_one_growth() {
    // A table told to expect 600,000 fingerprints goes from its first
    // length straight to one that holds them all, and so does one told
    // at 4 MiB (2 huge pages); `bytes_after` says so beforehand.
    // The long jumps (the second one rebuilds in place where the
    // address space allows) lose no entry and no id, crowds of shared
    // homes included.
    let fps = crowded_fps(600_000, 0x5851_f42d_4c95_7f2d, 40, 3, |i, x| {
        (u64::MAX / 7 * (i % 7)).wrapping_sub(x & 0xfff)
    });
    let distinct = fps.iter().collect::<std::collections::HashSet<_>>().len();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("pool");
    for start_at in [0, 200_000] {
        pool.install(|| {
            let mut t = FingerprintTable::<true>::with_phase(3);
            let (early, late) = fps.split_at(start_at);
            let mut want = HashMap::new();
            for &fp in early {
                insert_checked(&mut t, fp, &mut want);
            }
            t.expect_total(distinct);
            let before = t.slots.len();
            let predicted = t.bytes_after(max_filled(before) + 1 - t.len());
            let mut lens = vec![before];
            for &fp in late {
                insert_checked(&mut t, fp, &mut want);
                if lens.last() != Some(&t.slots.len()) {
                    lens.push(t.slots.len());
                }
            }
            assert_eq!(lens.len(), 2, "one growth: {lens:?}");
            if start_at > 0 {
                assert_eq!(before, 2 * PAGE_BUCKETS);
            }
            assert!(max_filled(lens[1]) >= distinct);
            assert!(
                max_filled(next_len(before, 3)) < distinct,
                "past the next step"
            );
            assert_eq!(predicted, lens[1] * (BUCKET + 4 * SLOTS));
            check_finds(&t, &want);
        });
    }
    // Without an expectation, the same table takes many steps.
    let mut t = FingerprintTable::<false>::with_phase(3);
    let mut growths = 0;
    for &fp in &fps {
        let len = t.slots.len();
        t.insert(fp);
        growths += usize::from(t.slots.len() != len);
    }
    assert!(growths > 5, "{growths} growths");
}

#[test]
fn fpset_split_point_bounds() {
    let pages = |n: usize| n * PAGE_BUCKETS;
    // Too small to split, or not growing.
    assert_eq!(split_point(PAGE_BUCKETS - 1, pages(2), 0), None);
    assert_eq!(split_point(pages(8), pages(8), 0), None);
    // Half the table; the lower part's entries end before `d`.
    let (m, d) = split_point(pages(20), pages(26), 0).expect("split");
    assert_eq!(m, pages(10));
    assert_eq!(d, pages(13));
    // A large table sets aside at most `REBUILD_ASIDE_BYTES`.
    for id_bytes in [0, 4 * SLOTS] {
        let (m, d) = split_point(pages(400), pages(520), id_bytes).expect("split");
        assert!(m < pages(200));
        assert!((d - m) * (BUCKET + id_bytes) <= REBUILD_ASIDE_BYTES + BUCKET + id_bytes);
    }
}

#[test]
fn fpset_keeps_101_low_bits() {
    let mut t = FingerprintTable::<true>::default();
    let a = fingerprint(b"a");
    // Every bit below `KEPT_BITS` tells fingerprints apart.
    assert_eq!(t.insert(a), Insert::New(0));
    for bit in 0..KEPT_BITS {
        assert_eq!(t.insert(a ^ (1 << bit)), Insert::New(bit + 1), "bit {bit}");
    }
    // Bits from there on are the caller's (its shard or partition).
    assert_eq!(t.insert(a ^ (1 << KEPT_BITS)), Insert::Seen(0));
    assert_eq!(t.insert(a ^ (1 << 127)), Insert::Seen(0));
    // The zero fingerprint is one like any other.
    assert_eq!(t.insert(0), Insert::New(KEPT_BITS + 1));
    assert_eq!(t.insert(0), Insert::Seen(KEPT_BITS + 1));
}

#[test]
fn fpset_crowded_homes_through_growth() {
    // Uniform fingerprints, and among them groups of 300 that share
    // their home at every length (low bits within 2^16 of each other):
    // long overflow chains, clusters that wrap around the end, and
    // entries far from their homes when a table grows in place.
    let fps = crowded_fps(240_000, 0x9e37_79b9_7f4a_7c15, 40, 3, |i, x| {
        let group = (i / 40) % 20;
        let base = [0, u64::MAX - 0xffff, group << 59][(group % 3) as usize];
        base.wrapping_add(x & 0xffff)
    });
    let mut t = FingerprintTable::<true>::with_phase(3);
    check_against_map(&mut t, &fps);
    assert!(matches!(t.slots.mem, SlotMemory::Map { .. }));
    let mut all = FingerprintTable::<false>::with_phase(11);
    let mut seen = std::collections::HashSet::new();
    for piece in fps.chunks(7_777) {
        all.insert_all(
            piece,
            |&fp| fp,
            |&fp, ins| {
                assert_eq!(ins.is_new(), seen.insert(fp));
            },
        );
    }
}

/// `insert_all` gives what one `insert` per item gives, through growth
/// (heap and in place) and duplicates.
fn check_insert_all<const WITH_IDS: bool>() {
    let mut items: Vec<u128> = Vec::new();
    for i in 0..250_000u32 {
        items.push(fingerprint(&(i % 200_000).to_le_bytes()));
        if i % 40_000 == 7 {
            items.push(0);
        }
    }
    let mut one = FingerprintTable::<WITH_IDS>::default();
    let want: Vec<Insert> = items.iter().map(|&fp| one.insert(fp)).collect();
    let mut all = FingerprintTable::<WITH_IDS>::default();
    let mut got = Vec::new();
    // In pieces, as the engine does, one per chunk.
    for piece in items.chunks(30_001) {
        all.insert_all(piece, |&fp| fp, |&fp, ins| got.push((fp, ins)));
    }
    assert_eq!(got.len(), items.len());
    for ((fp, ins), (&item, &w)) in got.iter().zip(items.iter().zip(&want)) {
        assert_eq!((*fp, *ins), (item, w));
    }
    assert_eq!(all.len(), 200_001);
    assert_eq!(all.len(), one.len());
    assert!(all.slots.len() * BUCKET > HUGE_PAGE, "grown in place");
}

#[test]
fn fpset_insert_all_matches_insert() {
    check_insert_all::<false>();
    check_insert_all::<true>();
}

#[test]
fn fpset_next_len_steps() {
    let mut len = MIN_BUCKETS;
    let mut seen = vec![len];
    while len < PAGE_BUCKETS {
        len = next_len(len, 0);
        seen.push(len);
    }
    assert_eq!(seen, [64, 256, 1024, 4096, 16384, 32768]);
    // From one huge page on: steps of about 1.4 in whole pages, each
    // phase on its own sizes.
    let pages = |phase| {
        let mut len = PAGE_BUCKETS;
        let mut out = Vec::new();
        while len < 100 * PAGE_BUCKETS {
            len = next_len(len, phase);
            assert_eq!(len % PAGE_BUCKETS, 0);
            out.push(len / PAGE_BUCKETS);
        }
        out
    };
    assert_eq!(
        pages(0),
        [2, 3, 4, 5, 7, 9, 11, 14, 18, 24, 31, 40, 52, 67, 87, 113]
    );
    assert_ne!(pages(8), pages(0));
    for phase in 0..PHASES {
        for w in pages(phase).windows(2) {
            assert!(w[1] > w[0], "{w:?}");
            assert!(w[0] < 10 || w[1] * 10 <= w[0] * 14, "{w:?}");
        }
    }
}

#[test]
fn fpset_bytes_per_key_over_staggered_tables() {
    // 16 tables filled at the same pace, as the engine's shards are:
    // from 8 M keys on, their buckets take at most 19 bytes a key, and
    // about 16.7 on average over sizes.
    let mut sum = 0f64;
    let mut points = 0;
    let mut n = 8usize << 20;
    while n < 4usize << 30 {
        let bytes: usize = (0..PHASES)
            .map(|p| FingerprintTable::<false>::with_phase(p).bytes_after(n / PHASES))
            .sum();
        let per_key = bytes as f64 / n as f64;
        assert!(per_key <= 19.0, "{per_key:.1} bytes a key at {n} keys");
        sum += per_key;
        points += 1;
        n += n / 64;
    }
    let mean = sum / f64::from(points);
    assert!((16.0..17.5).contains(&mean), "{mean:.1}");
}
