//! `urikey._urikey._cli_main`: the `urikey` command itself (the crate's
//! `src/cli/`, the code the binary runs), behind `python -m urikey` and the
//! wheel's `urikey` console command (`urikey/__main__.py`).

use pyo3::prelude::*;

/// Runs the `urikey` command line and returns its exit status. Internal:
/// `urikey.__main__.main` calls it.
///
/// Args:
///     args (list[bytes]): the command line, program name first, each
///         argument as `os.fsencode` gives it.
///
/// Returns:
///     int: the exit status (0 success, 1 invalid lines with
///     --fail-on-invalid, 2 usage or I/O error, 130 interrupted).
///
/// Raises:
///     TypeError: an argument is not bytes.
///
/// Example:
///     >>> urikey._urikey._cli_main([b"urikey", b"--version"])  # doctest: +SKIP
///     0
#[pyfunction]
pub fn _cli_main(py: Python<'_>, args: Vec<Vec<u8>>) -> i32 {
    #[cfg(unix)]
    let args: Vec<std::ffi::OsString> = {
        use std::os::unix::ffi::OsStringExt;
        args.into_iter().map(std::ffi::OsString::from_vec).collect()
    };
    #[cfg(not(unix))]
    let args: Vec<std::ffi::OsString> = args
        .into_iter()
        .map(|a| String::from_utf8_lossy(&a).into_owned().into())
        .collect();
    // The command installs its own Ctrl-C handler and prints as it goes;
    // other Python threads may run meanwhile.
    py.allow_threads(|| urikey::cli::main_with_args(args))
}
