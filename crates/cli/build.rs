//! How the release `hearth` binary is linked on Linux, so that a short command keeps
//! little of it resident (see ARCHITECTURE.md, "A one-shot command's memory"). Only the
//! place of code and the form of relocations change, nothing the code does.
//!
//! - `link/hot-text.ld` (written by `link/hot-text`) puts the functions short commands
//!   run together at the start of the code. The kernel maps code 64 KiB around each page
//!   a process first runs, so those functions spread over the binary would make most of
//!   it resident.
//! - Relative relocations packed (`DT_RELR`): the dynamic loader reads a few kilobytes
//!   at start instead of a table of megabytes. Only where this machine's C library
//!   understands them (glibc 2.36 or later), since the binary built here runs here.

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=link/hot-text.ld");
    let target = |key: &str| env::var(key).unwrap_or_default();
    let release = target("PROFILE") == "release";
    if !release || target("CARGO_CFG_TARGET_OS") != "linux" {
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("link/hot-text.ld");
    // A script of `INSERT` commands adds to the linker's own layout (lld's and GNU ld's).
    println!(
        "cargo:rustc-link-arg-bin=hearth=-Wl,-T,{}",
        script.display()
    );
    let native = target("HOST") == target("TARGET");
    if native && target("CARGO_CFG_TARGET_ENV") == "gnu" && glibc_reads_relr() {
        println!("cargo:rustc-link-arg-bin=hearth=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the C library this build runs on (the one the binary will run on) is glibc
/// 2.36 or later, the first whose loader applies packed relative relocations. glibc's
/// `getconf` says `glibc 2.36`; anything else, or no answer, is taken as older.
fn glibc_reads_relr() -> bool {
    let Ok(output) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|part| part.parse::<u32>().ok());
    matches!(
        (parts.next().flatten(), parts.next().flatten()),
        (Some(major), Some(minor)) if (major, minor) >= (2, 36)
    )
}
