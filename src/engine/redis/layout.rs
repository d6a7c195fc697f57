//! Where a fingerprint lives in Redis: a bucket (a SET key) chosen by its
//! top bits, and a member, the next 64 bits as a signed integer, so that a
//! bucket is an intset: 8 bytes a member, no hash table.
//!
//! ```text
//! NAME:meta                        the meta (see meta.rs)
//! NAME:LEVEL:{TTTT}REST            a bucket of level LEVEL (bits): TTTT the
//!                                  top 16 bits in hex (the Cluster hash tag),
//!                                  REST the next LEVEL-16 bits in hex
//! ```
//!
//! A set made with `base` bits of bucket keeps bits `[64 - base, 128 - base)`
//! of each fingerprint as its member, for life: `base + 64` bits are
//! compared (at least 80). Growing (see grow.rs) moves the members of a
//! bucket of level L into the buckets of a deeper level, chosen by more top
//! bits, which the member holds; the member does not change. The hash tag is
//! the top 16 bits at every level, so a bucket and its children share a
//! Cluster slot (a move is one transaction) and 65,536 tags spread the set
//! over the slots.

/// Bits of the hash tag (and the fewest bits of a bucket).
pub const TAG_BITS: u32 = 16;

/// Most bits of a bucket.
pub const MAX_BITS: u32 = 40;

/// Members a bucket is planned to hold at most at the planned size: below
/// Redis's `set-max-intset-entries` (512), past which a bucket becomes a
/// hash table of about 80 bytes a member, with room for the spread of
/// bucket sizes (at a mean of 300 the fullest of 2^20 buckets holds about
/// 390).
pub const PLANNED_MEAN: u64 = 300;

/// The mean bucket size at which `state info` says to grow: the fullest of
/// 2^20 buckets then nears 512.
pub const GROW_MEAN: u64 = 400;

/// The value left in a bucket's key once its members moved to a deeper
/// level: `urikey-moved LEVEL`. A write to it fails with WRONGTYPE, which
/// sends the writer on to the new bucket.
pub const TOMBSTONE_PREFIX: &str = "urikey-moved ";

/// Bucket bits for a set planned to hold `keys`: the fewest that keep the
/// mean bucket at or under [`PLANNED_MEAN`], and at least [`TAG_BITS`].
pub fn bits_for(keys: u64) -> u32 {
    let buckets = keys.div_ceil(PLANNED_MEAN).max(1);
    let bits = u64::BITS - (buckets - 1).leading_zeros();
    bits.clamp(TAG_BITS, MAX_BITS)
}

/// How the fingerprints of a set map to buckets and members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    name: String,
    /// Bucket bits the set was made with: which 64 bits are the member.
    base: u32,
}

impl Layout {
    /// The layout of set `name` made with `base` bucket bits.
    pub fn new(name: &str, base: u32) -> Self {
        debug_assert!((TAG_BITS..=MAX_BITS).contains(&base));
        Self {
            name: name.to_owned(),
            base,
        }
    }

    /// The set's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The bucket bits the set was made with.
    pub fn base(&self) -> u32 {
        self.base
    }

    /// Bits of the fingerprint the set compares.
    pub fn compared_bits(&self) -> u32 {
        self.base + 64
    }

    /// The key of the meta.
    pub fn meta_key(&self) -> String {
        format!("{}:meta", self.name)
    }

    /// The member of `fp`.
    pub fn member(&self, fp: u128) -> i64 {
        (fp >> (64 - self.base)) as u64 as i64
    }

    /// The bucket of `fp` at `level` bits.
    pub fn bucket(fp: u128, level: u32) -> u64 {
        (fp >> (128 - level)) as u64
    }

    /// The key of bucket `bucket` of `level`.
    pub fn key(&self, level: u32, bucket: u64) -> String {
        let mut key = String::with_capacity(self.name.len() + 24);
        self.push_key(&mut key, level, bucket);
        key
    }

    /// Appends the key of bucket `bucket` of `level` to `out` (a batch's
    /// keys share one buffer: an allocation a key cost a tenth of a
    /// lookup's client time).
    pub fn push_key(&self, out: &mut String, level: u32, bucket: u64) {
        let rest_bits = level - TAG_BITS;
        out.push_str(&self.name);
        out.push(':');
        out.push_str(itoa::Buffer::new().format(level));
        out.push_str(":{");
        push_hex(out, bucket >> rest_bits, 4);
        out.push('}');
        if rest_bits > 0 {
            push_hex(out, bucket & ((1u64 << rest_bits) - 1), 1);
        }
    }

    /// The key of `fp`'s bucket at `level`.
    pub fn key_of(&self, fp: u128, level: u32) -> String {
        self.key(level, Self::bucket(fp, level))
    }

    /// The level and bucket of a key of this set, `None` for the meta, keys
    /// of other names and levels the set cannot have.
    pub fn parse_key(&self, key: &str) -> Option<(u32, u64)> {
        let rest = key.strip_prefix(&self.name)?.strip_prefix(':')?;
        let (level, rest) = rest.split_once(':')?;
        let level: u32 = level.parse().ok()?;
        // No level of the set is below the bits it was made with.
        if !(self.base..=MAX_BITS).contains(&level) {
            return None;
        }
        let rest = rest.strip_prefix('{')?;
        let (tag, low) = rest.split_once('}')?;
        let tag = u64::from_str_radix(tag, 16).ok()?;
        let rest_bits = level - TAG_BITS;
        let low = if rest_bits == 0 {
            if !low.is_empty() {
                return None;
            }
            0
        } else {
            u64::from_str_radix(low, 16).ok()?
        };
        Some(((level), (tag << rest_bits) | low))
    }

    /// The fingerprint the set holds for `member` of a bucket of `level`:
    /// the compared bits, the others zero.
    pub fn fingerprint(&self, level: u32, bucket: u64, member: i64) -> u128 {
        let top = u128::from(bucket >> (level - self.base));
        (top << (128 - self.base)) | (u128::from(member as u64) << (64 - self.base))
    }

    /// `fp` with the bits the set does not keep cleared.
    pub fn kept(&self, fp: u128) -> u128 {
        fp & !((1u128 << (64 - self.base)) - 1)
    }

    /// The tombstone pointing to `level`.
    pub fn tombstone(level: u32) -> String {
        format!("{TOMBSTONE_PREFIX}{level}")
    }

    /// The level a tombstone points to.
    pub fn parse_tombstone(value: &[u8]) -> Option<u32> {
        let s = std::str::from_utf8(value).ok()?;
        let level: u32 = s.strip_prefix(TOMBSTONE_PREFIX)?.parse().ok()?;
        (TAG_BITS..=MAX_BITS).contains(&level).then_some(level)
    }
}

/// Appends `v` in lower-case hex, at least `width` digits.
fn push_hex(out: &mut String, v: u64, width: u32) {
    let digits = (u64::BITS - v.leading_zeros()).div_ceil(4).max(width);
    for i in (0..digits).rev() {
        let d = ((v >> (4 * i)) & 0xf) as u8;
        out.push(char::from(if d < 10 { b'0' + d } else { b'a' + d - 10 }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_layout_bits_grow_with_the_plan() {
        assert_eq!(bits_for(0), 16);
        assert_eq!(bits_for(10_000_000), 16);
        assert_eq!(bits_for(100_000_000), 19);
        assert_eq!(bits_for(1_000_000_000), 22);
        assert_eq!(bits_for(10_000_000_000), 25);
        assert_eq!(bits_for(u64::MAX), MAX_BITS);
        for keys in [1u64 << 20, 100_000_000, 1_000_000_000] {
            let b = bits_for(keys);
            assert!(keys.div_ceil(1 << b) <= PLANNED_MEAN, "{keys}");
            assert!(keys.div_ceil(1 << (b - 1)) > PLANNED_MEAN || b == TAG_BITS);
        }
    }

    #[test]
    fn redis_layout_keys_are_spelled_as_sets_already_in_redis_have_them() {
        // The spelling sets were made with: a change would orphan every bucket.
        let spelled = |name: &str, level: u32, bucket: u64| {
            let rest_bits = level - TAG_BITS;
            let tag = bucket >> rest_bits;
            if rest_bits == 0 {
                format!("{name}:{level}:{{{tag:04x}}}")
            } else {
                let rest = bucket & ((1u64 << rest_bits) - 1);
                format!("{name}:{level}:{{{tag:04x}}}{rest:x}")
            }
        };
        let l = Layout::new("crawl", 16);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for level in TAG_BITS..=MAX_BITS {
            let top = (1u64 << level) - 1;
            for bucket in [0, 1, 0xf, 0x10, top >> 1, top, top & x] {
                assert_eq!(l.key(level, bucket), spelled("crawl", level, bucket));
            }
            x = x.rotate_left(7) ^ u64::from(level);
        }
        assert_eq!(l.key(16, 0), "crawl:16:{0000}");
        assert_eq!(l.key(17, 1), "crawl:17:{0000}1");
        assert_eq!(l.key(24, 0xabcdef), "crawl:24:{abcd}ef");
    }

    #[test]
    fn redis_layout_keys_members_and_fingerprints_round_trip() {
        let l = Layout::new("crawl", 19);
        let fp = 0xfedc_ba98_7654_3210_0123_4567_89ab_cdefu128;
        for level in [19, 21, 40] {
            let key = l.key_of(fp, level);
            assert!(key.starts_with(&format!("crawl:{level}:{{fedc}}")), "{key}");
            let (lv, b) = l.parse_key(&key).unwrap();
            assert_eq!((lv, b), (level, Layout::bucket(fp, level)));
            assert_eq!(l.fingerprint(lv, b, l.member(fp)), l.kept(fp));
        }
        assert_eq!(l.kept(fp) >> 45, fp >> 45);
        assert_eq!(l.kept(fp) & ((1 << 45) - 1), 0);
        assert_eq!(l.compared_bits(), 83);
        assert!(l.parse_key("crawl:meta").is_none());
        assert!(l.parse_key("crawl:16:{0000}").is_none(), "below the base");
        let l16 = Layout::new("crawl", 16);
        let key = l16.key_of(fp, 16);
        assert_eq!(key, "crawl:16:{fedc}");
        assert_eq!(l16.parse_key(&key), Some((16, 0xfedc)));
        assert_eq!(l16.fingerprint(16, 0xfedc, l16.member(fp)), l16.kept(fp));
        assert!(l.parse_key("other:19:{0000}0").is_none());
        assert!(l16.parse_key("crawl:16:{0000}1").is_none());
        // The member's sign is its top bit.
        assert!(l.member(u128::MAX) < 0 && l.member(0) == 0);
        assert_eq!(Layout::parse_tombstone(b"urikey-moved 18"), Some(18));
        assert_eq!(Layout::parse_tombstone(b"urikey-moved 99"), None);
        assert_eq!(Layout::parse_tombstone(b"x"), None);
    }
}
