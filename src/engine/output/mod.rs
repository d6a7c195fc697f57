//! Bytes out: the output file (written whole under a temporary name and
//! renamed, or in place), its buffered and direct writers, and the output
//! of `--count`, which is written only once the input is read.

pub(crate) mod counted;
pub(crate) mod direct;
pub mod file;
pub(crate) mod out_buf;
