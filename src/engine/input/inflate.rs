//! One gzip member inflated whole, by libdeflate (its C library, through
//! `libdeflate-sys`).
//!
//! libdeflate inflates a member held whole in memory into an output room
//! given up front, and says how much input the member took. On one thread
//! it decodes CDXJ members 1.6× and members of plain URL lines 1.7× as fast
//! as one flate2 stream (zlib-rs backend; `examples/gunzip_members`). That
//! is how [`gzip`](super::gzip) decodes the members of a mapped file or of
//! a window of a pipe. Whatever it does not take whole (a member whose
//! output passes the room, a fault, a header with a CRC of its own) is left
//! to the caller's streaming decoder, which gives the same output, the same
//! partial output of a failed member and the same errors as it always did.
//!
//! libdeflate reads a few damaged encodings that zlib rejects (the
//! `gzip_members` fuzz target found one that zlib stops at with "invalid
//! distance code"). Its output is only taken when the member's CRC-32 and
//! length check, so it is then what the writer wrote: such a member reads
//! where flate2 called it corrupt, and is never read wrong.
#![allow(unsafe_code)]

use std::ptr::NonNull;

use libdeflate_sys::{
    libdeflate_alloc_decompressor, libdeflate_decompressor, libdeflate_free_decompressor,
    libdeflate_gzip_decompress_ex, libdeflate_result_LIBDEFLATE_SUCCESS,
};

/// FLG's FHCRC bit (RFC 1952 §2.3.1): the header has a CRC-16 of its own,
/// which libdeflate skips without checking and the streaming decoder checks.
const FHCRC: u8 = 0x02;

/// A libdeflate decompressor (its tables and state, about 10 KiB), used by
/// one thread at a time.
pub(crate) struct Inflater(NonNull<libdeflate_decompressor>);

impl core::fmt::Debug for Inflater {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Inflater").finish_non_exhaustive()
    }
}

impl Inflater {
    /// A decompressor, or `None` when its memory cannot be had.
    pub(crate) fn new() -> Option<Self> {
        // SAFETY: no arguments; the result is a valid decompressor or null.
        NonNull::new(unsafe { libdeflate_alloc_decompressor() }).map(Self)
    }

    /// Inflates the gzip member at the start of `input` onto the end of
    /// `out` when its output is at most `room` bytes, its CRC-32 and length
    /// check and its header has no CRC of its own; returns how many bytes
    /// of `input` the member takes. Otherwise `None`, and `out` keeps its
    /// length (bytes past it may have been written).
    pub(crate) fn member(&mut self, input: &[u8], out: &mut Vec<u8>, room: usize) -> Option<usize> {
        if input.get(3).is_none_or(|flg| flg & FHCRC != 0) {
            return None;
        }
        out.reserve(room);
        let (mut used, mut written) = (0usize, 0usize);
        let spare = out.spare_capacity_mut();
        // SAFETY: the decompressor is valid and only this thread uses it
        // (`&mut self`). It reads at most `input.len()` bytes of `input`
        // and writes at most `room <= spare.len()` bytes into `out`'s spare
        // capacity, which `reserve` made; both results are written through
        // valid pointers to locals.
        let result = unsafe {
            libdeflate_gzip_decompress_ex(
                self.0.as_ptr(),
                input.as_ptr().cast(),
                input.len(),
                spare.as_mut_ptr().cast(),
                room,
                &raw mut used,
                &raw mut written,
            )
        };
        if result != libdeflate_result_LIBDEFLATE_SUCCESS {
            return None;
        }
        debug_assert!(written <= room && used <= input.len());
        let len = out.len() + written;
        // SAFETY: on success libdeflate wrote the member's `written <= room`
        // bytes of output at the start of the spare capacity, so the first
        // `len` bytes are initialized.
        unsafe { out.set_len(len) };
        Some(used)
    }
}

impl Drop for Inflater {
    fn drop(&mut self) {
        // SAFETY: the decompressor came from `libdeflate_alloc_decompressor`
        // and is freed once, here.
        unsafe { libdeflate_free_decompressor(self.0.as_ptr()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::input::gzip::tests::gz;

    #[test]
    fn inflates_one_member_and_says_where_it_ends() {
        let text = b"https://example.com/a\nhttps://example.com/b\n".repeat(500);
        let mut input = gz(&text, 6);
        let first = input.len();
        input.extend(gz(b"next member\n", 6));
        let mut out = b"before:".to_vec();
        let used = Inflater::new().unwrap().member(&input, &mut out, 1 << 20);
        assert_eq!(used, Some(first));
        assert_eq!(&out[..7], b"before:");
        assert_eq!(&out[7..], &text[..]);
    }

    #[test]
    fn leaves_to_the_caller_what_it_does_not_take_whole() {
        let text = b"0123456789".repeat(1000);
        let input = gz(&text, 6);
        let mut d = Inflater::new().unwrap();
        let mut out = b"kept".to_vec();
        // Output larger than the room.
        assert_eq!(d.member(&input, &mut out, text.len() - 1), None);
        assert_eq!(out, b"kept");
        // Truncated, corrupt (CRC), empty, a header CRC.
        assert_eq!(d.member(&input[..input.len() - 5], &mut out, 1 << 20), None);
        let mut bad_crc = input.clone();
        let n = bad_crc.len();
        bad_crc[n - 6] ^= 1;
        assert_eq!(d.member(&bad_crc, &mut out, 1 << 20), None);
        assert_eq!(d.member(&[], &mut out, 1 << 20), None);
        let mut fhcrc = input.clone();
        fhcrc[3] |= FHCRC;
        assert_eq!(d.member(&fhcrc, &mut out, 1 << 20), None);
        assert_eq!(out, b"kept");
        // And then a good one again, with the same decompressor.
        assert_eq!(d.member(&input, &mut out, text.len()), Some(input.len()));
        assert_eq!(&out[4..], &text[..]);
    }
}
