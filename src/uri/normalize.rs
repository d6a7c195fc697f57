//! Normalization (STUB interface, to be completed).

/// Normalization settings.
#[derive(Clone, Debug, Default)]
pub struct Normalizer {}
