//! `hearth history import`: the stores each agent keeps (small copies of what the real
//! agents wrote, under a user's home, located the way Hearth starts each agent — its
//! default folder under `HOME`, or the folder its `[agents.<id>] env` names) imported
//! into Hearth: per agent found, imported, updated, skipped, errors; nothing twice.

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::mock::configure;
use super::support::Hearth;

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A user's home holding every agent's store where the agent keeps it by default, but
/// Codex's, which `config.toml` moves.
fn user_home(hearth: &Hearth) -> tempfile::TempDir {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../history/fixtures");
    let home = tempfile::tempdir().unwrap();
    for (agent, folder) in [
        ("claude", ".claude"),
        ("gemini", ".gemini"),
        ("copilot", ".copilot"),
        ("opencode", ".local/share/opencode"),
        ("codex", "elsewhere/codex"),
    ] {
        copy_tree(&fixtures.join(agent), &home.path().join(folder));
    }
    let codex_home = home.path().join("elsewhere/codex");
    configure(
        hearth,
        &format!(
            "[agents.codex]\nenv = {{ CODEX_HOME = {:?} }}\n",
            codex_home.display().to_string()
        ),
    );
    home
}

fn import(hearth: &Hearth, home: &Path, args: &[&str]) -> Vec<Value> {
    let output = hearth
        .command()
        .args(["history", "import", "--json"])
        .args(args)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("COPILOT_HOME")
        .env_remove("GEMINI_CLI_HOME")
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn counts(reports: &[Value]) -> Vec<(String, [u64; 4])> {
    reports
        .iter()
        .map(|report| {
            assert_eq!(report["errors"], serde_json::json!([]), "{report}");
            let count = |name: &str| report[name].as_u64().unwrap();
            (
                report["agent"].as_str().unwrap().to_owned(),
                [
                    count("found"),
                    count("imported"),
                    count("updated"),
                    count("skipped"),
                ],
            )
        })
        .collect()
}

#[test]
fn history_import_brings_every_agents_store_in_once() {
    let hearth = Hearth::new();
    let home = user_home(&hearth);
    let reports = import(&hearth, home.path(), &[]);
    let mut agents = counts(&reports);
    agents.sort();
    assert_eq!(
        agents,
        ["claude", "codex", "copilot", "gemini", "opencode"]
            .map(|agent| (agent.to_owned(), [1, 1, 0, 0]))
    );
    let codex = reports
        .iter()
        .find(|report| report["agent"] == "codex")
        .unwrap();
    assert_eq!(
        codex["store"],
        home.path().join("elsewhere/codex").display().to_string()
    );

    let again = counts(&import(&hearth, home.path(), &[]));
    assert!(
        again.iter().all(|(_, count)| *count == [1, 0, 0, 1]),
        "{again:?}"
    );
    let gemini = counts(&import(&hearth, home.path(), &["--agent", "gemini"]));
    assert_eq!(gemini, vec![("gemini".to_owned(), [1, 0, 0, 1])]);

    let sessions = hearth.session_uris();
    assert_eq!(sessions.len(), 5, "{sessions:?}");
    let claude = sessions
        .iter()
        .find(|uri| uri.contains("16d5267c"))
        .unwrap();
    let shown = hearth.ok(&["sessions", "show", claude, "--json"]);
    assert!(shown.contains("I wrote the note."), "{shown}");
    assert!(
        shown.contains("/tmp/.tmp7rr7LO/work"),
        "the session's folder: {shown}"
    );
}

#[test]
fn hearth_serve_imports_in_the_background() {
    let hearth = Hearth::new();
    let home = user_home(&hearth);
    let path = |relative: &str| home.path().join(relative).display().to_string();
    let (claude, copilot, data) = (path(".claude"), path(".copilot"), path(".local/share"));
    let served = super::serve_support::Served::start(
        hearth,
        &[],
        &[
            ("HOME", &path("")),
            ("GEMINI_CLI_HOME", &path("")),
            ("XDG_DATA_HOME", &data),
            ("CLAUDE_CONFIG_DIR", &claude),
            ("COPILOT_HOME", &copilot),
        ],
    );
    // The import runs beside the server, which answers from its start: wait for it.
    let deadline = std::time::Instant::now() + super::serve_support::WAIT;
    loop {
        let sessions = served.hearth.session_uris();
        if sessions.len() == 5 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not import the agents' stores: {sessions:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
