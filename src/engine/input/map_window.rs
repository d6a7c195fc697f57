//! Reading lines back from mapped inputs at the end of a run, in input
//! order, with a bounded resident set.

use crate::engine::input::SharedBytes;
use crate::engine::prefetch::{prefetch, SEQUENTIAL_AHEAD};

/// Pages of a mapped input the final pass maps ahead of the bytes it
/// copies, and keeps behind them before releasing them.
const MAP_WINDOW: usize = 4 << 20;

/// The part of a shared buffer (a mapped input) a final pass reads (that
/// of a spilled run, or the `--count` output): it goes through each input
/// once, in order, mapping pages ahead of it and releasing those behind,
/// so the resident set stays within about three windows however large the
/// input.
#[derive(Default)]
pub struct MapWindow {
    /// The input being read.
    input: Option<usize>,
    /// Pages before this offset are released (or were never mapped).
    behind: usize,
    /// Pages up to this offset were asked to be mapped.
    ahead: usize,
}

impl MapWindow {
    /// The `len` bytes at `offset` in the shared buffer of input `input`.
    pub fn slice<'m>(
        &mut self,
        maps: &'m [Option<SharedBytes>],
        input: usize,
        offset: usize,
        len: usize,
    ) -> &'m [u8] {
        let Some(Some(map)) = maps.get(input) else {
            return &[];
        };
        if self.input != Some(input) {
            self.leave(maps);
            *self = Self {
                input: Some(input),
                behind: offset,
                ahead: offset,
            };
        }
        let end = offset.saturating_add(len);
        if end > self.ahead {
            // One call maps the window: cheaper than a fault every few
            // pages.
            self.ahead = end.max(offset.saturating_add(MAP_WINDOW));
            map.prefault(offset..self.ahead.min(map.as_slice().len()));
        }
        if offset >= self.behind.saturating_add(2 * MAP_WINDOW) {
            let to = offset - MAP_WINDOW;
            map.release(self.behind..to);
            self.behind = to;
        }
        // The lines come in input order: the bytes a little ahead are
        // read soon.
        prefetch(map.as_slice(), end + SEQUENTIAL_AHEAD);
        map.as_slice().get(offset..end).unwrap_or_default()
    }

    /// Releases what is still mapped of the input being read.
    pub fn leave(&self, maps: &[Option<SharedBytes>]) {
        if let Some(Some(map)) = self.input.and_then(|i| maps.get(i)) {
            map.release(self.behind..map.as_slice().len());
        }
    }
}
