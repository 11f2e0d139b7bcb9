//! The test venv's python (`HEARTH_PYTHON_VENV`, else `<repo>/target/python-venv`, filled
//! by `.ci/install-python-packages`), for tests that run a real Python counterpart.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::process::{BoundedCommand, PROCESS_WAIT};

/// The venv's python when it can import `module`; else `None`, the test skipped with the
/// reason, unless the variable `required_by` is `1` (as CI sets it), which makes that a
/// failure.
#[allow(clippy::print_stderr)] // a skipped test says why
pub fn venv_python(module: &str, required_by: &str) -> Option<PathBuf> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let venv = std::env::var_os("HEARTH_PYTHON_VENV")
        .map_or_else(|| repo.join("target/python-venv"), PathBuf::from);
    let python = venv.join("bin/python");
    let works = python.exists()
        && Command::new(&python)
            .args(["-c", &format!("import {module}")])
            .stdin(Stdio::null())
            .output_within(PROCESS_WAIT)
            .status
            .success();
    if works {
        return Some(python);
    }
    let reason = format!(
        "no python with the `{module}` package at {}; run .ci/install-python-packages",
        python.display()
    );
    assert!(
        std::env::var(required_by).as_deref() != Ok("1"),
        "{required_by}=1 but {reason}"
    );
    eprintln!("skipped: {reason}");
    None
}
