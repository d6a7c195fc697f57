//! Percent-encoding helpers (§2.1).
