//! The lines of a batch of Python strings: most borrow the strings' own
//! UTF-8 bytes, the rest (strings with lone surrogates) are copies in one
//! arena owned here. Free of Python types, so that Miri can check the
//! borrows (`docs/testing.md`).

use crate::keys::Line;

/// Where one line's bytes are while the batch is being read.
enum Piece {
    Missing,
    Borrowed(&'static [u8]),
    Owned(std::ops::Range<usize>),
}

/// Collects lines, then [`finish`](Self::finish)es them into [`HeldLines`].
#[derive(Default)]
pub struct HeldLinesBuilder {
    pieces: Vec<Piece>,
    arena: Vec<u8>,
}

/// Lines that borrow memory held elsewhere or in their own arena.
pub struct HeldLines {
    /// Only read through `lines`; written never again once built.
    _arena: Vec<u8>,
    /// Borrowed from `_arena` or from the caller's memory; never handed
    /// out for longer than `self`.
    lines: Vec<Line<'static>>,
}

/// Extends a borrow to `'static`.
///
/// # Safety
/// `bytes` must stay valid and unchanged as long as the value that holds
/// the result exists.
pub unsafe fn held(bytes: &[u8]) -> &'static [u8] {
    // SAFETY: per the function's contract.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr(), bytes.len()) }
}

impl HeldLinesBuilder {
    /// A builder with room for `n` lines.
    pub fn with_capacity(n: usize) -> Self {
        Self {
            pieces: Vec::with_capacity(n),
            arena: Vec::new(),
        }
    }

    /// A missing line (`None`).
    pub fn push_missing(&mut self) {
        self.pieces.push(Piece::Missing);
    }

    /// A line that borrows `bytes`.
    ///
    /// # Safety
    /// `bytes` must stay valid and unchanged as long as the [`HeldLines`]
    /// built from this builder exists (the caller holds their owner beside
    /// it).
    pub unsafe fn push_borrowed(&mut self, bytes: &[u8]) {
        // SAFETY: per this function's contract.
        self.pieces.push(Piece::Borrowed(unsafe { held(bytes) }));
    }

    /// A line whose bytes are copied into the arena.
    pub fn push_owned(&mut self, bytes: &[u8]) {
        let start = self.arena.len();
        self.arena.extend_from_slice(bytes);
        self.pieces.push(Piece::Owned(start..self.arena.len()));
    }

    /// The lines, in the order they were pushed.
    pub fn finish(self) -> HeldLines {
        let arena = self.arena;
        let lines = self
            .pieces
            .into_iter()
            .map(|piece| match piece {
                Piece::Missing => None,
                Piece::Borrowed(b) => Some(b),
                // SAFETY: the arena is complete (never written again) and
                // moves into the result as a `Vec`, whose heap buffer stays
                // where it is (a `Vec` is not retagged when moved, as a
                // `Box` is).
                Piece::Owned(range) => Some(unsafe { held(arena.get(range).unwrap_or_default()) }),
            })
            .collect();
        HeldLines {
            _arena: arena,
            lines,
        }
    }
}

impl HeldLines {
    /// The lines, in order, borrowed for as long as `self`.
    pub fn lines(&self) -> &[Line<'_>] {
        &self.lines
    }

    /// Lines that borrow memory the caller holds beside the result.
    ///
    /// # Safety
    /// Every line's bytes must stay valid and unchanged as long as the
    /// result exists.
    pub unsafe fn borrowing(lines: Vec<Line<'_>>) -> Self {
        let lines = lines
            .into_iter()
            // SAFETY: per this function's contract.
            .map(|l| l.map(|b| unsafe { held(b) }))
            .collect();
        Self {
            _arena: Vec::new(),
            lines,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run under Miri (see docs/testing.md): borrowed and owned lines read
    /// back after the arena and the result have moved.
    #[test]
    fn held_lines_survive_moves() {
        let outside: Vec<String> = (0..50).map(|i| format!("http://a.com/{i}")).collect();
        let mut builder = HeldLinesBuilder::with_capacity(outside.len() + 2);
        builder.push_missing();
        for (i, s) in outside.iter().enumerate() {
            if i % 3 == 0 {
                builder.push_owned(format!("http://owned/{i}").as_bytes());
            } else {
                // SAFETY: `outside` outlives `held`.
                unsafe { builder.push_borrowed(s.as_bytes()) };
            }
        }
        let held = builder.finish();
        let moved = Box::new(held);
        let lines = moved.lines();
        assert_eq!(lines.len(), 51);
        assert_eq!(lines[0], None);
        for (i, (line, s)) in lines[1..].iter().zip(&outside).enumerate() {
            let want = if i % 3 == 0 {
                format!("http://owned/{i}")
            } else {
                s.clone()
            };
            assert_eq!(*line, Some(want.as_bytes()));
        }
    }

    #[test]
    fn held_lines_borrowing() {
        let data = b"http://a/\nhttp://b/".to_vec();
        let parts: Vec<Line<'_>> = data.split(|&b| b == b'\n').map(Some).collect();
        // SAFETY: `data` outlives `held`.
        let held = unsafe { HeldLines::borrowing(parts) };
        assert_eq!(
            held.lines(),
            &[Some(&b"http://a/"[..]), Some(&b"http://b/"[..])]
        );
    }
}
