//! The scheme: its length, and CPython 3.11's `urllib.parse` scheme
//! tables (`uses_params`, `uses_netloc`) and the URL Standard's special
//! schemes.

use super::sets::set;
use crate::uri::compat::bytes::Set;

/// Bytes of a scheme after its first letter.
pub(super) const SCHEME_TAIL: Set = set(b"+", b"_~");

/// The length of the scheme `url` starts with (0 when it does not start
/// with a letter); the caller checks that a `:` follows.
pub(super) fn scheme_len(url: &[u8]) -> usize {
    if !url.first().is_some_and(u8::is_ascii_alphabetic) {
        return 0;
    }
    url.iter()
        .position(|&b| !SCHEME_TAIL[b as usize])
        .unwrap_or(url.len())
}

/// Schemes whose URLs are "special" in the URL Standard.
pub(super) fn is_special(scheme: &str) -> bool {
    matches!(scheme, "ftp" | "file" | "http" | "https" | "ws" | "wss")
}

/// `urllib.parse.uses_params` of CPython 3.11.
pub(super) fn uses_params(scheme: &str) -> bool {
    matches!(
        scheme,
        "" | "ftp"
            | "hdl"
            | "prospero"
            | "http"
            | "imap"
            | "https"
            | "shttp"
            | "rtsp"
            | "rtsps"
            | "rtspu"
            | "sip"
            | "sips"
            | "mms"
            | "sftp"
            | "tel"
    )
}

/// `urllib.parse.uses_netloc` of CPython 3.11 (without `''`, which the
/// caller never asks about).
pub(super) fn uses_netloc(scheme: &str) -> bool {
    matches!(
        scheme,
        "ftp"
            | "http"
            | "gopher"
            | "nntp"
            | "telnet"
            | "imap"
            | "wais"
            | "file"
            | "mms"
            | "https"
            | "shttp"
            | "snews"
            | "prospero"
            | "rtsp"
            | "rtsps"
            | "rtspu"
            | "rsync"
            | "svn"
            | "svn+ssh"
            | "sftp"
            | "nfs"
            | "git"
            | "git+ssh"
            | "ws"
            | "wss"
    )
}
