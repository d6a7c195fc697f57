//! "Seen before?" over fingerprints: the engine's fingerprint table, so a
//! `Deduplicator` holds a key in the same 23 to 34 bytes the CLI's seen-set
//! does, with the same collision bound.

use urikey::engine::fpset::FingerprintTable;

/// A growing set of fingerprints.
#[derive(Debug, Default)]
pub struct Seen {
    table: FingerprintTable<false>,
}

impl Seen {
    /// Inserts every present fingerprint in order; the mask is true where a
    /// fingerprint was not in the set before (the first line of its key),
    /// false for duplicates and for `None` (missing or invalid lines).
    pub fn add(&mut self, fps: &[Option<u128>]) -> Vec<bool> {
        let present: Vec<u128> = fps.iter().flatten().copied().collect();
        let mut fresh = Vec::with_capacity(present.len());
        self.table
            .insert_all(&present, |fp| *fp, |_, ins| fresh.push(ins.is_new()));
        let mut fresh = fresh.into_iter();
        fps.iter()
            .map(|fp| fp.is_some() && fresh.next().unwrap_or(false))
            .collect()
    }

    /// Distinct fingerprints held.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Heap bytes held by the set.
    pub fn heap_bytes(&self) -> usize {
        self.table.heap_bytes()
    }
}
