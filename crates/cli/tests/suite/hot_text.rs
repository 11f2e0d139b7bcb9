//! The release binary's code layout (`crates/cli/link/hot-text.ld`, see ARCHITECTURE.md):
//! the script links with this toolchain's linker, and its patterns match the names this
//! toolchain gives functions (the standard library's, which every program runs).

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::path::Path;
use std::process::Command;

/// The sizes of an ELF file's sections, by name.
fn section_sizes(elf: &[u8]) -> Vec<(String, u64)> {
    let u16_at = |at: usize| u64::from(u16::from_le_bytes([elf[at], elf[at + 1]]));
    let u32_at = |at: usize| u64::from(u32::from_le_bytes(elf[at..at + 4].try_into().unwrap()));
    let u64_at = |at: usize| u64::from_le_bytes(elf[at..at + 8].try_into().unwrap());
    assert_eq!(&elf[..5], b"\x7fELF\x02", "a 64-bit ELF file");
    let (table, entry, count) = (u64_at(0x28), u16_at(0x3a), u16_at(0x3c));
    let header = |index: u64| (table + index * entry) as usize;
    let names = u64_at(header(u16_at(0x3e)) + 0x18) as usize;
    (0..count)
        .map(|index| {
            let start = names + u32_at(header(index)) as usize;
            let end = start + elf[start..].iter().position(|&b| b == 0).unwrap();
            let name = String::from_utf8_lossy(&elf[start..end]).into_owned();
            (name, u64_at(header(index) + 0x20))
        })
        .collect()
}

#[test]
fn the_hot_text_script_links_and_gathers_the_functions_a_program_runs() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("link/hot-text.ld");
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("main.rs");
    std::fs::write(
        &source,
        "fn main() { println!(\"{}\", std::env::args().count()); }",
    )
    .unwrap();
    let program = dir.path().join("program");
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let built = Command::new(rustc)
        .args([
            "--edition",
            "2021",
            "-C",
            "opt-level=1",
            "-C",
            "symbol-mangling-version=v0",
        ])
        .arg("-C")
        .arg(format!("link-arg=-Wl,-T,{}", script.display()))
        .arg("-o")
        .arg(&program)
        .arg(&source)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ran = Command::new(&program).args(["a", "b"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "3\n");
    let sections = section_sizes(&std::fs::read(&program).unwrap());
    let hot = sections.iter().find(|(name, _)| name == ".text.hot");
    assert!(
        hot.is_some_and(|(_, size)| *size > 0),
        "no functions in .text.hot: {sections:?}"
    );
}
