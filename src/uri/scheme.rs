//! Known schemes (STUB, to be completed).
