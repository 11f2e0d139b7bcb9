//! Where the deterministic ACP test agent (`hearth-acp-test-agent`) is: built with the
//! workspace into the same target directory as the test binary; built on demand when a
//! test of one crate runs alone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const NAME: &str = "hearth-acp-test-agent";

fn target_directory() -> PathBuf {
    // The test binary is `<target>/<profile>/deps/<name>-<hash>`.
    let exe = std::env::current_exe().unwrap_or_else(|error| panic!("current exe: {error}"));
    exe.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| panic!("unexpected test binary location {}", exe.display()))
}

/// The path of the test agent's binary, building it first if it is missing.
pub fn acp_test_agent() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let path = target_directory().join(NAME);
        if !path.exists() {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let status = Command::new(cargo)
                .args(["build", "--quiet", "-p", NAME])
                .status()
                .unwrap_or_else(|error| panic!("building {NAME}: {error}"));
            assert!(status.success(), "building {NAME} failed");
        }
        assert!(
            path.exists(),
            "{} is missing after building it",
            path.display()
        );
        path
    })
    .clone()
}
