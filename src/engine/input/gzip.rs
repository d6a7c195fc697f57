//! Multi-member gzip on all cores.
//!
//! A gzip file may be many members, one after the other (RFC 1952 §2.2);
//! Common Crawl writes every file so (a CDXJ member per 3,000 lines, a WARC
//! member per record), and so does `bgzip`. Members decompress on their
//! own, so a mapped file is cut into segments of [`SEGMENT`] compressed
//! bytes, and each segment is decoded on a worker thread: from the first
//! member that starts in it, every member that starts in it (the last one
//! runs on past its end).
//!
//! Where a member starts is only known for sure once the member before it
//! has decompressed to its end: a segment's worker *guesses* its first
//! member, at the first `1f 8b 08` header that decodes as a whole member
//! (with its CRC-32 and length checked), and the guess is only used once it
//! is *verified*. The reader takes the segments in order and keeps the
//! offset where the members decoded so far end (the first member of the
//! file starts at 0): a segment is used only when its first member starts
//! exactly there. A segment whose members that one spans is skipped; a
//! segment whose guess is wrong (bytes inside compressed data that look
//! like a header and happen to decode) is decoded again on the reader's
//! thread from the verified offset. So the output is the sequential
//! decoder's, byte for byte, whatever the content.
//!
//! Memory stays bounded: at most `2 × threads` segments are in flight, and a
//! member whose output passes [`CAP`] (one large member, as `gzip` writes
//! a whole file) is not buffered: its worker stops, and the reader
//! decompresses the rest of it as a stream, on its own thread, before
//! going on in parallel after it.
//!
//! A member that fails (truncated, corrupt) is an error naming its
//! offset in the file, returned once the output of the members before it
//! (and what the failed one gave) has been read.

use std::io::{self, BufRead, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use flate2::bufread::GzDecoder;

use super::inflate::Inflater;
use super::ordered::OrderedPool;
use super::{take_spare, SharedBytes, Spare};

/// Compressed bytes of a segment.
pub const SEGMENT: usize = 128 << 10;

/// Compressed bytes used between releases of a mapped file's pages.
const RELEASE_BYTES: usize = 8 << 20;

/// Most output a worker buffers for one segment before handing the member
/// it is in to the reader's thread.
pub const CAP: usize = 32 << 20;

/// The gzip member header's first bytes: ID1, ID2, CM = deflate.
const HEADER: &[u8] = &[0x1f, 0x8b, 0x08];

impl core::fmt::Debug for SliceAt {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SliceAt")
            .field("pos", &self.pos)
            .finish_non_exhaustive()
    }
}

/// A [`BufRead`] over a shared byte slice from a position.
pub struct SliceAt {
    bytes: SharedBytes,
    pos: usize,
}

impl Read for SliceAt {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let rest = self.fill_buf()?;
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for SliceAt {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        Ok(self.bytes.as_slice().get(self.pos..).unwrap_or_default())
    }

    fn consume(&mut self, amt: usize) {
        self.pos += amt;
    }
}

/// A member being decoded, handed from a worker to the reader.
type Tail = GzDecoder<SliceAt>;

/// What a worker made of a segment.
struct Decoded {
    /// The segment's end (exclusive).
    seg_end: usize,
    /// Where its first member starts (`None`: no member starts in it).
    start: Option<usize>,
    /// Where the last member decoded whole ends.
    end: usize,
    /// The output of its members: `out[..len]` (the rest of `out` is
    /// initialized memory kept for reuse, so that it is never zeroed again).
    out: Vec<u8>,
    len: usize,
    /// A member whose output passed [`CAP`], to be finished as a stream.
    tail: Option<(usize, Box<Tail>)>,
    /// The member at this offset failed: the error, after `out`.
    error: Option<(usize, io::Error)>,
    /// Windowed: the member at this offset failed (true: or its output
    /// passed the cap), its output is not in `out`.
    cut: Option<(usize, bool)>,
}

/// How one member's decoding ended.
enum Member {
    /// Whole, ending at this offset.
    Done(usize),
    /// Output passed the cap: the decoder, mid-member.
    Tail(Box<Tail>),
    /// It failed.
    Failed(io::Error),
}

/// Decodes the member at `start` into `out[*len..]`, growing `out` (its
/// length is initialized memory, not output) while the output is at most
/// `cap` bytes: whole by `fast` when it takes it, else as a stream.
fn member(
    bytes: &SharedBytes,
    start: usize,
    out: &mut Vec<u8>,
    len: &mut usize,
    cap: usize,
    fast: Option<&mut Inflater>,
) -> Member {
    if let Some(fast) = fast.filter(|_| *len <= cap) {
        out.truncate(*len);
        let room = FAST_ROOM.min(cap - *len);
        let input = bytes.as_slice().get(start..).unwrap_or_default();
        if let Some(used) = fast.member(input, out, room) {
            *len = out.len();
            return Member::Done(start + used);
        }
    }
    let mut dec = GzDecoder::new(SliceAt {
        bytes: bytes.clone(),
        pos: start,
    });
    loop {
        if *len > cap {
            // Bytes past the cap were read to know the member goes on; they
            // are kept, and the decoder resumes after them.
            return Member::Tail(Box::new(dec));
        }
        if out.len() - *len < ROOM {
            // A recycled buffer comes back cut to its last output: inside
            // its capacity it grows a step at a time, since `resize` zeroes
            // what it adds (doubling it zeroed as much as was decoded, 4%
            // of a CDXJ run).
            let step = *len + 2 * ROOM;
            let grown = if out.capacity() >= step {
                step
            } else {
                (2 * out.len()).max(*len + 4 * ROOM)
            };
            out.resize(grown.min(cap + 2 * ROOM).max(*len + ROOM), 0);
        }
        match dec.read(&mut out[*len..]) {
            Ok(0) => return Member::Done(dec.get_ref().pos),
            Ok(n) => *len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Member::Failed(e),
        }
    }
}

/// Least room a read into the output gets.
const ROOM: usize = 64 << 10;

/// The most output a member gets from libdeflate, which needs its room up
/// front: a larger member is decoded as a stream after it (so at most this
/// much is decoded twice). A Common Crawl CDXJ member holds about 1.7 MB.
const FAST_ROOM: usize = 8 << 20;

/// True when `at` starts something that looks like a gzip member header.
fn plausible_header(data: &[u8], at: usize) -> bool {
    // FLG's reserved bits are zero; XFL is 0, 2 or 4.
    data.get(at..at + 10)
        .is_some_and(|h| h.starts_with(HEADER) && h[3] & 0xe0 == 0 && matches!(h[8], 0 | 2 | 4))
}

/// True when the bytes from `at` (where a member would start) to the end
/// of `data` are zeros: the padding some writers leave after the last
/// member. A member starts with `1f 8b`, so a zero there is never one.
pub(crate) fn zero_padding(data: &[u8], at: usize) -> bool {
    data.get(at) == Some(&0) && data[at..].iter().all(|&b| b == 0)
}

/// How a segment is decoded: from `from` exactly or from the first
/// header that decodes; `windowed`: `bytes` is a window of a stream, whose
/// members may go on past its end.
#[derive(Clone, Copy)]
struct Mode {
    exact: bool,
    windowed: bool,
}

/// Decodes the segment `[from, seg_end)`: from `from` exactly when
/// `mode.exact`, else from the first header in it that decodes as a
/// member. Windowed, a member that fails or passes the cap is cut: its
/// output is left out.
fn decode_segment(
    bytes: &SharedBytes,
    from: usize,
    seg_end: usize,
    mode: Mode,
    cap: usize,
    out: Vec<u8>,
) -> Decoded {
    let Mode { exact, windowed } = mode;
    let data = bytes.as_slice();
    let mut fast = Inflater::new();
    let mut d = Decoded {
        seg_end,
        start: None,
        end: from,
        out,
        len: 0,
        tail: None,
        error: None,
        cut: None,
    };
    // The first member.
    let mut at = from;
    loop {
        if !exact {
            let found = memchr::memmem::find_iter(&data[at..seg_end.min(data.len())], HEADER)
                .map(|i| at + i)
                .find(|&i| plausible_header(data, i));
            match found {
                Some(i) => at = i,
                None => return d,
            }
        }
        d.len = 0;
        if exact && zero_padding(data, at) {
            d.start = Some(at);
            padding_end(&mut d, at, windowed, data.len());
            return d;
        }
        match member(bytes, at, &mut d.out, &mut d.len, cap, fast.as_mut()) {
            Member::Done(end) => {
                d.start = Some(at);
                d.end = end;
                break;
            }
            Member::Tail(_) if windowed => {
                d.start = Some(at);
                d.len = 0;
                d.cut = Some((at, true));
                return d;
            }
            Member::Tail(t) => {
                d.start = Some(at);
                d.tail = Some((at, t));
                return d;
            }
            Member::Failed(e) => {
                if exact {
                    d.start = Some(at);
                    if windowed {
                        d.len = 0;
                        d.cut = Some((at, false));
                    } else {
                        d.error = Some((at, e));
                    }
                    return d;
                }
                d.len = 0;
                at += 1;
            }
        }
    }
    // The members after it that start in the segment.
    while d.end < seg_end && d.end < data.len() {
        let at = d.end;
        let before = d.len;
        if zero_padding(data, at) {
            padding_end(&mut d, at, windowed, data.len());
            break;
        }
        match member(bytes, at, &mut d.out, &mut d.len, cap, fast.as_mut()) {
            Member::Done(end) => d.end = end,
            Member::Tail(_) if windowed => {
                d.len = before;
                d.cut = Some((at, true));
                break;
            }
            Member::Failed(_) if windowed => {
                d.len = before;
                d.cut = Some((at, false));
                break;
            }
            Member::Tail(t) => {
                d.tail = Some((at, t));
                break;
            }
            Member::Failed(e) => {
                d.error = Some((at, e));
                break;
            }
        }
    }
    d
}

/// Zero padding from `at` to the end of `len` bytes: the end of a file;
/// in a window of a stream, which may go on with more zeros or with
/// something else, the window is cut there and the next one decides.
fn padding_end(d: &mut Decoded, at: usize, windowed: bool, len: usize) {
    if windowed {
        d.cut = Some((at, false));
    } else {
        d.end = len;
    }
}

/// A job for the workers: a segment to decode.
struct Job {
    bytes: SharedBytes,
    from: usize,
    seg_end: usize,
    mode: Mode,
    cap: usize,
    spare: Spare,
}

impl Job {
    fn decode(self) -> Decoded {
        let out = take_spare(&self.spare);
        decode_segment(
            &self.bytes,
            self.from,
            self.seg_end,
            self.mode,
            self.cap,
            out,
        )
    }
}

impl core::fmt::Debug for MemberReader {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("MemberReader").finish_non_exhaustive()
    }
}

/// The decompressed content of a mapped multi-member gzip file, decoded
/// on `threads` worker threads (see the module's doc).
pub struct MemberReader {
    bytes: SharedBytes,
    /// Where the members decoded so far end: the next member's start.
    verified: usize,
    /// The decoders, and the segments in flight (in order).
    pool: OrderedPool<Job, Decoded>,
    /// Where the next segment to hand out starts.
    next_segment: usize,
    window: usize,
    segment: usize,
    cap: usize,
    spare: Spare,
    /// Output being read out: `current[read_pos..current_len]`.
    current: Vec<u8>,
    current_len: usize,
    read_pos: usize,
    /// A large member being finished as a stream, and where it started.
    streaming: Option<(usize, Box<Tail>)>,
    /// An error to return once `current` is read out.
    failed: Option<io::Error>,
    raw_read: Arc<AtomicU64>,
    /// Compressed bytes already counted in `raw_read`.
    counted: usize,
    /// Compressed bytes whose mapped pages were released.
    released: usize,
    /// Output read ahead by [`head`](Self::head), to be read again first.
    head: Vec<u8>,
    /// Where `bytes` starts in the whole input (for error messages).
    base: u64,
    /// `bytes` is a window of a stream (see [`Mode`]).
    windowed: bool,
    /// Windowed: the member cut, and whether its output passed the cap.
    cut: Option<(usize, bool)>,
}

impl MemberReader {
    /// A reader of the gzip file `bytes` on `threads` workers (at least
    /// one); compressed bytes are added to `raw_read` as they are used.
    pub fn new(bytes: SharedBytes, threads: usize, raw_read: &Arc<AtomicU64>) -> Self {
        Self::with_sizes(bytes, threads, raw_read, SEGMENT, CAP)
    }

    /// [`new`](Self::new) with another segment size and output cap (tests
    /// and tuning).
    pub fn with_sizes(
        bytes: SharedBytes,
        threads: usize,
        raw_read: &Arc<AtomicU64>,
        segment: usize,
        cap: usize,
    ) -> Self {
        let threads = threads.max(1);
        let (segment, cap) = (segment.max(1), cap.max(1));
        // Without a worker, every segment is decoded on the reader's
        // thread (as a redo).
        let pool = OrderedPool::start("urikey-gunzip", threads, Job::decode);
        Self {
            bytes,
            verified: 0,
            pool,
            next_segment: 0,
            window: 2 * threads,
            segment,
            cap,
            spare: Spare::default(),
            current: Vec::new(),
            current_len: 0,
            read_pos: 0,
            streaming: None,
            failed: None,
            raw_read: Arc::clone(raw_read),
            counted: 0,
            released: 0,
            head: Vec::new(),
            base: 0,
            windowed: false,
            cut: None,
        }
    }

    /// A reader of `bytes`, a window of a stream that starts at `base` of
    /// it, decoding into the buffers of `spare`. Unless it is the stream's
    /// `last`, a member that fails, or whose output passes the cap, may go
    /// on past the window's end, so it is *cut*: the output of the members
    /// before it is read, then an error, and [`cut`](Self::cut) says where
    /// it starts.
    pub(crate) fn window(
        bytes: SharedBytes,
        base: u64,
        last: bool,
        threads: usize,
        raw_read: &Arc<AtomicU64>,
        spare: &Spare,
    ) -> Self {
        let mut r = Self::new(bytes, threads, raw_read);
        r.spare = Arc::clone(spare);
        r.base = base;
        r.windowed = !last;
        r
    }

    /// Windowed, once reading failed there: where the cut member starts,
    /// and true when it failed by passing the cap.
    pub(crate) fn cut(&self) -> Option<(usize, bool)> {
        self.cut
    }

    fn mode(&self, exact: bool) -> Mode {
        Mode {
            exact,
            windowed: self.windowed,
        }
    }

    /// The error of the member at offset `at`.
    fn member_error(&self, at: usize, e: io::Error) -> io::Error {
        member_error(self.base + at as u64, e)
    }

    /// The first `n` bytes of the output (fewer if it is shorter), which
    /// are read again afterwards.
    ///
    /// # Errors
    /// A member's error, as [`Read`] gives it.
    pub fn head(&mut self, n: usize) -> io::Result<Vec<u8>> {
        let mut head = Vec::new();
        self.by_ref().take(n as u64).read_to_end(&mut head)?;
        self.head.clone_from(&head);
        Ok(head)
    }

    fn len(&self) -> usize {
        self.bytes.as_slice().len()
    }

    /// Hands segments to the workers until the window is full.
    fn submit(&mut self) {
        while self.pool.has_workers()
            && self.pool.in_flight() < self.window
            && self.next_segment < self.len()
        {
            let from = self.next_segment.max(self.verified);
            let seg_end = (from.saturating_add(self.segment)).min(self.len());
            let job = Job {
                bytes: self.bytes.clone(),
                from,
                seg_end,
                mode: self.mode(from == self.verified),
                cap: self.cap,
                spare: Arc::clone(&self.spare),
            };
            if self.pool.submit(job).is_err() {
                return;
            }
            self.next_segment = seg_end;
        }
    }

    /// Hands a read-out buffer back to the workers.
    fn recycle(&mut self, buf: Vec<u8>) {
        if buf.capacity() == 0 {
            return;
        }
        if let Ok(mut spare) = self.spare.lock() {
            if spare.len() <= self.window {
                spare.push(buf);
            }
        }
    }

    /// Counts the compressed bytes up to `to` as read.
    fn count(&mut self, to: usize) {
        if to > self.counted {
            self.raw_read
                .fetch_add((to - self.counted) as u64, Ordering::Relaxed);
            self.counted = to;
        }
        // The compressed bytes used leave the resident set, or a mapped
        // file stays resident to its end (0.5 GB for the CDXJ of 1 GB of
        // URLs); a few MiB at a time, as each release interrupts the
        // other cores to flush their TLBs.
        if self.counted >= self.released + RELEASE_BYTES {
            self.bytes.release(self.released..self.counted);
            self.released = self.counted;
        }
    }

    /// Takes a decoded segment whose first member starts at `verified`.
    fn accept(&mut self, d: Decoded) {
        let old = std::mem::replace(&mut self.current, d.out);
        self.recycle(old);
        self.current_len = d.len;
        self.read_pos = 0;
        self.verified = d.end;
        if let Some((start, tail)) = d.tail {
            self.streaming = Some((start, tail));
        }
        if let Some((at, long)) = d.cut {
            self.cut = Some((at, long));
            self.failed = Some(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "a gzip member goes on past the window",
            ));
            self.verified = self.len();
            self.next_segment = self.len();
            self.pool.forget();
        }
        if let Some((at, e)) = d.error {
            self.failed = Some(self.member_error(at, e));
            // Nothing after a failed member is read.
            self.verified = self.len();
            self.next_segment = self.len();
            self.pool.forget();
        }
        self.count(self.verified.min(self.len()));
    }

    /// Gets more output into `current`; false at the end.
    fn refill(&mut self) -> io::Result<bool> {
        loop {
            if let Some((start, dec)) = &mut self.streaming {
                if self.current.len() < ROOM {
                    self.current.resize(1 << 20, 0);
                }
                match dec.read(&mut self.current) {
                    Ok(0) => {
                        self.verified = dec.get_ref().pos;
                        self.streaming = None;
                        self.current_len = 0;
                        self.read_pos = 0;
                        // Segments inside the member are skipped below.
                        if self.next_segment < self.verified {
                            self.next_segment = self.verified;
                        }
                        self.count(self.verified);
                        continue;
                    }
                    Ok(n) => {
                        self.current_len = n;
                        self.read_pos = 0;
                        let pos = dec.get_ref().pos;
                        self.count(pos);
                        return Ok(true);
                    }
                    Err(e) => {
                        let start = *start;
                        self.streaming = None;
                        let e = self.member_error(start, e);
                        self.verified = self.len();
                        self.pool.forget();
                        return Err(e);
                    }
                }
            }
            if let Some(e) = self.failed.take() {
                return Err(e);
            }
            if self.verified >= self.len() {
                return Ok(false);
            }
            self.submit();
            let d = self.pool.next();
            match d {
                // A segment the members read so far span.
                Some(d) if d.seg_end <= self.verified => {
                    self.recycle(d.out);
                    continue;
                }
                Some(d) if d.start == Some(self.verified) => self.accept(d),
                other => {
                    // A wrong guess, a lost worker, or no worker: decode
                    // from the verified offset here.
                    let seg_end = other.as_ref().map_or_else(
                        || (self.verified.saturating_add(self.segment)).min(self.len()),
                        |d| d.seg_end.max(self.verified + 1).min(self.len()),
                    );
                    if let Some(d) = other {
                        self.recycle(d.out);
                    }
                    let out = take_spare(&self.spare);
                    let d = decode_segment(
                        &self.bytes,
                        self.verified,
                        seg_end,
                        self.mode(true),
                        self.cap,
                        out,
                    );
                    if self.next_segment < d.seg_end {
                        self.next_segment = d.seg_end;
                    }
                    self.accept(d);
                }
            }
            if self.read_pos < self.current_len {
                return Ok(true);
            }
        }
    }
}

/// The error of the member at offset `at` of the file.
fn member_error(at: u64, e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("the gzip member at byte {at} of the file is truncated or corrupt: {e}"),
    )
}

impl super::blocks::MemberBlocks for MemberReader {
    fn head(&mut self, n: usize) -> io::Result<Vec<u8>> {
        MemberReader::head(self, n)
    }
}

impl super::blocks::Blocks for MemberReader {
    fn next_block(&mut self) -> io::Result<Option<Vec<u8>>> {
        MemberReader::next_block(self)
    }

    /// The workers' spare buffers: a block handed out comes back to them.
    fn home(&self) -> Option<crate::engine::input::Home> {
        Some(crate::engine::input::Home {
            pool: Arc::downgrade(&self.spare),
            max: self.window + 1,
        })
    }
}

impl MemberReader {
    /// The next part of the output (never empty), a decoded segment at a
    /// time, without a copy; `None` at the end. Reading on with
    /// [`Read`] after it is fine.
    ///
    /// # Errors
    /// A member's error, once the output before it was handed out.
    pub fn next_block(&mut self) -> io::Result<Option<Vec<u8>>> {
        if !self.head.is_empty() {
            return Ok(Some(std::mem::take(&mut self.head)));
        }
        if self.read_pos >= self.current_len && !self.refill()? {
            return Ok(None);
        }
        let mut block = std::mem::take(&mut self.current);
        block.truncate(self.current_len);
        block.drain(..self.read_pos);
        self.current_len = 0;
        self.read_pos = 0;
        Ok(Some(block))
    }

    /// Hands a block taken by [`next_block`](Self::next_block) back, to be
    /// decoded into again: reused memory costs no page faults, as in the
    /// engine's runs, where a block goes back once its lines are done.
    pub fn give_back(&mut self, block: Vec<u8>) {
        self.recycle(block);
    }
}

impl Read for MemberReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.head.is_empty() {
            let n = self.head.len().min(buf.len());
            buf[..n].copy_from_slice(&self.head[..n]);
            self.head.drain(..n);
            return Ok(n);
        }
        if self.read_pos >= self.current_len && !self.refill()? {
            return Ok(0);
        }
        let rest = &self.current[self.read_pos..self.current_len];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.read_pos += n;
        Ok(n)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Write;

    /// `data` as one gzip member at `level` (the other gzip modules' tests
    /// use it too).
    pub(crate) fn gz(data: &[u8], level: u32) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn members(parts: &[Vec<u8>]) -> Vec<u8> {
        parts.iter().flat_map(|p| gz(p, 6)).collect()
    }

    /// Small segments and cap, so that small files take every path.
    fn reader(file: Vec<u8>, threads: usize) -> MemberReader {
        let bytes = SharedBytes::from_memory(Arc::from(file));
        MemberReader::with_sizes(bytes, threads, &Arc::new(AtomicU64::new(0)), 4096, 64 << 10)
    }

    fn read_all(file: Vec<u8>, threads: usize) -> io::Result<Vec<u8>> {
        let mut r = reader(file, threads);
        let mut out = Vec::new();
        r.read_to_end(&mut out).map(|_| out)
    }

    fn text(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed;
        let mut out = Vec::new();
        for i in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            out.extend_from_slice(format!("http://h{}.example/{i}/{x:x}\n", x % 97).as_bytes());
        }
        out
    }

    #[test]
    fn gzip_members_in_order_any_threads() {
        // Members of many sizes, some larger than a segment, one larger than
        // the cap would be if it were small.
        let parts: Vec<Vec<u8>> = (0..40).map(|i| text(20 + i * 60, i as u64)).collect();
        let file = members(&parts);
        assert!(file.len() > 20 * 4096, "{}", file.len());
        let want: Vec<u8> = parts.concat();
        for threads in [1, 2, 3] {
            assert_eq!(read_all(file.clone(), threads).unwrap(), want);
        }
        // One member: read as a stream once past the cap.
        let big = text(20_000, 7);
        assert_eq!(read_all(gz(&big, 1), 2).unwrap(), big);
        // Stored (level 0) members hold the input's bytes as they are: a
        // member holding gzip files looks like headers inside.
        let inner = members(&parts[..5]);
        let tricky = [inner.clone(), text(100, 1), inner];
        let file: Vec<u8> = tricky.iter().flat_map(|p| gz(p, 0)).collect();
        assert_eq!(read_all(file, 2).unwrap(), tricky.concat());
    }

    #[test]
    fn gzip_truncated_member_after_the_output_before_it() {
        let parts: Vec<Vec<u8>> = (0..30).map(|i| text(400, i)).collect();
        let mut file = members(&parts);
        let cut_at = file.len() - 100;
        file.truncate(cut_at);
        let mut r = reader(file, 2);
        let mut out = Vec::new();
        let err = r.read_to_end(&mut out).unwrap_err();
        assert!(err.to_string().contains("the gzip member at byte"), "{err}");
        let whole: Vec<u8> = parts[..29].concat();
        assert!(out.starts_with(&whole));
        assert!(out.len() < parts.concat().len());
    }

    #[test]
    fn gzip_zero_padding_after_the_last_member_is_the_end() {
        let parts: Vec<Vec<u8>> = (0..30).map(|i| text(400, i)).collect();
        let mut file = members(&parts);
        // A tape block's worth of zeros, more than a segment.
        file.resize(file.len() + 200_000, 0);
        for threads in [1, 2, 3] {
            assert_eq!(read_all(file.clone(), threads).unwrap(), parts.concat());
        }
        // A member after the zeros: an error where the zeros start, as
        // zcat's trailing garbage.
        let padding = members(&parts).len();
        file.extend(gz(b"http://late.example/\n", 6));
        let err = read_all(file, 2).unwrap_err();
        assert!(
            err.to_string()
                .contains(&format!("gzip member at byte {padding} ")),
            "{err}"
        );
    }

    /// How a generated file is damaged.
    #[derive(Debug, Clone)]
    enum Damage {
        None,
        /// XOR a byte (offset taken modulo the length) with a non-zero mask.
        Flip(usize, u8),
        Truncate(usize),
        Trailing(Vec<u8>),
        /// Zeros after the last member, then maybe other bytes.
        Padding(usize, Vec<u8>),
    }

    fn damage() -> impl Strategy<Value = Damage> {
        prop_oneof![
            2 => Just(Damage::None),
            2 => (any::<usize>(), 1u8..).prop_map(|(at, x)| Damage::Flip(at, x)),
            1 => any::<usize>().prop_map(Damage::Truncate),
            1 => proptest::collection::vec(any::<u8>(), 1..20).prop_map(Damage::Trailing),
            1 => (1usize..5000, proptest::collection::vec(any::<u8>(), 0..3))
                .prop_map(|(n, t)| Damage::Padding(n, t)),
        ]
    }

    /// A member's content: compressible text, random bytes, or both, and
    /// the level it is compressed at (0: stored, as is).
    fn part() -> impl Strategy<Value = (Vec<u8>, u32)> {
        let content = prop_oneof![
            (0usize..400, any::<u64>()).prop_map(|(n, seed)| text(n, seed)),
            proptest::collection::vec(any::<u8>(), 0..600),
            (proptest::collection::vec(any::<u8>(), 0..100), 0usize..50)
                .prop_map(|(b, n)| b.repeat(n)),
        ];
        (content, prop_oneof![Just(0u32), Just(1), Just(6), Just(9)])
    }

    proptest! {
        /// Whatever the members and their damage, and however the file is
        /// cut into segments and how much a segment may hold, the reader
        /// gives what one flate2 stream gives (zero padding at the end
        /// read as the end, `gzip_stream.rs`): the same output when it
        /// reads, else an error too, both outputs agreeing as far as both
        /// go; or, where libdeflate reads damage that still checks, exactly
        /// what was written.
        #[test]
        fn gzip_reader_is_one_flate2_stream(
            parts in proptest::collection::vec(part(), 0..10),
            damage in damage(),
            threads in 1usize..4,
            segment in 32usize..4096,
            cap in 1usize..40_000,
        ) {
            let mut file: Vec<u8> = parts.iter().flat_map(|(p, level)| gz(p, *level)).collect();
            match damage {
                Damage::None => {}
                Damage::Flip(at, x) if !file.is_empty() => {
                    let n = file.len();
                    file[at % n] ^= x;
                }
                Damage::Flip(..) => {}
                Damage::Truncate(at) => file.truncate(at % (file.len() + 1)),
                Damage::Trailing(t) => file.extend(t),
                Damage::Padding(n, t) => {
                    file.resize(file.len() + n, 0);
                    file.extend(t);
                }
            }
            // The engine hands this reader files that start with a gzip
            // header; flate2 calls an empty one an error.
            prop_assume!(!file.is_empty());
            let mut want = Vec::new();
            let want_ok = crate::engine::input::gzip_stream::GzStream::new(&file[..])
                .read_to_end(&mut want)
                .is_ok();
            let bytes = SharedBytes::from_memory(Arc::from(file));
            let mut r = MemberReader::with_sizes(bytes, threads, &Arc::new(AtomicU64::new(0)), segment, cap);
            let mut got = Vec::new();
            let got_ok = r.read_to_end(&mut got).is_ok();
            if want_ok {
                prop_assert!(got_ok);
                prop_assert!(got == want, "{} bytes read, {} wanted", got.len(), want.len());
            } else if got_ok {
                // libdeflate reads a few damaged encodings zlib rejects; it
                // is only trusted when the CRC-32 and length check, and then
                // gives what was written.
                let written: Vec<u8> = parts.iter().flat_map(|(p, _)| p.clone()).collect();
                prop_assert!(got == written);
            } else {
                let n = got.len().min(want.len());
                prop_assert!(got[..n] == want[..n]);
            }
        }
    }
}
