//! Every command of the README on a machine where Hearth never ran: a fresh `HOME` (no
//! data directory, no configuration, no provider keys), the commands run in the README's
//! order and, on another fresh `HOME`, in reverse — so no command works only because
//! another one ran before it and made the data directory.
//!
//! The table below holds one step per command line of the README; a test fails when the
//! README gains a command line the table does not have, so the two stay together.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hearth_test_support::{BoundedCommand, PROCESS_WAIT};

/// What a command must do on a fresh machine.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Exit 0.
    Success,
    /// Exit 0 or fail with one clear `hearth: error:` line (no provider, no agent, no
    /// session of that id on a new machine) — never because the data directory is
    /// missing.
    Answer,
    /// `hearth serve`: starts, prints its login link, stops on SIGTERM.
    Serves,
    /// `hearth doctor`: a report on stdout; exit 1 when nothing works (nothing is set up
    /// on a new machine), which is the report's verdict, not an error.
    Report,
}

/// One README command line and what is run for it.
struct Step {
    /// The command line as the README writes it (before its `#` comment).
    readme: &'static str,
    /// The arguments run (placeholders filled in; alternatives `a | b` run one by one).
    runs: &'static [&'static [&'static str]],
    expect: Expect,
}

/// Network addresses in the README are replaced by a closed loopback port: a test never
/// sends traffic to another host.
const CLOSED: &str = "http://127.0.0.1:9/notes";

const STEPS: &[Step] = &[
    Step {
        readme: r#"cargo run --release -- run "hello""#,
        runs: &[&["run", "hello"]],
        expect: Expect::Success,
    },
    Step {
        readme: "cargo run --release -- serve",
        // A free port instead of 8421, which a test running beside it may hold.
        runs: &[&["serve", "--port", "0"]],
        expect: Expect::Serves,
    },
    Step {
        readme: r#"hearth run "plan my week""#,
        runs: &[&["run", "plan my week"]],
        expect: Expect::Success,
    },
    Step {
        readme: r#"hearth run --provider openai --model gpt-4.1-mini "hi""#,
        runs: &[&[
            "run",
            "--provider",
            "openai",
            "--model",
            "gpt-4.1-mini",
            "hi",
        ]],
        expect: Expect::Answer,
    },
    Step {
        readme: r#"hearth run --session <session-uri> "and?""#,
        runs: &[&["run", "--session", "hearth-session:replay/0000", "and?"]],
        expect: Expect::Answer,
    },
    Step {
        readme: r#"hearth run --agent codex "fix the tests""#,
        runs: &[&["run", "--agent", "codex", "fix the tests"]],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth chat --agent claude",
        runs: &[&["chat", "--agent", "claude"]],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth agents list",
        runs: &[&["agents", "list"]],
        expect: Expect::Success,
    },
    Step {
        readme: "hearth agents login claude",
        runs: &[&["agents", "login", "claude"]],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth providers list",
        runs: &[&["providers", "list"]],
        expect: Expect::Success,
    },
    Step {
        readme: r#"hearth run --json "hello""#,
        runs: &[&["run", "--json", "hello"]],
        expect: Expect::Success,
    },
    Step {
        readme: "hearth chat",
        runs: &[&["chat"]],
        expect: Expect::Success,
    },
    Step {
        readme: r#"hearth run --attach notes.md "summarize @todo.txt""#,
        runs: &[&["run", "--attach", "notes.md", "summarize @todo.txt"]],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth resume",
        runs: &[&["resume"]],
        expect: Expect::Success,
    },
    Step {
        readme: r#"hearth search "disk full""#,
        runs: &[&["search", "disk full"]],
        expect: Expect::Success,
    },
    Step {
        readme: "hearth history import",
        runs: &[&["history", "import"], &["history", "import", "--json"]],
        expect: Expect::Success,
    },
    Step {
        readme: "hearth projects new Thesis --source paper.pdf --source https://example.org/notes",
        runs: &[&[
            "projects",
            "new",
            "Thesis",
            "--source",
            "paper.pdf",
            "--source",
            CLOSED,
        ]],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth chat --project Thesis",
        runs: &[&["chat", "--project", "Thesis"]],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth projects list | show | rename | delete | add-source | remove-source | relink",
        runs: &[
            &["projects", "list"],
            &["projects", "show", "Thesis"],
            &["projects", "rename", "Thesis", "Thesis 2"],
            &["projects", "add-source", "Thesis 2", "notes.md"],
            &["projects", "remove-source", "Thesis 2", "notes.md"],
            &["projects", "relink", "Thesis 2", "."],
            &["projects", "delete", "Thesis 2"],
        ],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth context status | retry <project> | clear | gc",
        runs: &[
            &["context", "status"],
            &["context", "retry", "Thesis"],
            &["context", "clear"],
            &["context", "gc"],
        ],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth doctor",
        runs: &[&["doctor"]],
        expect: Expect::Report,
    },
    Step {
        readme: "hearth sessions list|show|fork|delete",
        runs: &[
            &["sessions", "list"],
            &["sessions", "show", "hearth-session:replay/0000"],
            &["sessions", "fork", "hearth-session:replay/0000"],
            &["sessions", "delete", "hearth-session:replay/0000"],
        ],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth trash list | restore <id> | empty",
        runs: &[
            &["trash", "list"],
            &["trash", "restore", "0000"],
            &["trash", "empty"],
        ],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth export <session> [--format markdown|jsonl] [-o FILE]",
        runs: &[
            &["export", "hearth-session:replay/0000"],
            &["export", "0000", "--format", "jsonl"],
        ],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth export --all -o hearth.jsonl",
        runs: &[&["export", "--all", "-o", "hearth.jsonl"]],
        expect: Expect::Success,
    },
    Step {
        readme: "hearth import hearth.jsonl",
        runs: &[&["import", "hearth.jsonl"]],
        expect: Expect::Answer,
    },
    Step {
        readme: r#"hearth run -c "and then?""#,
        runs: &[&["run", "-c", "and then?"]],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth chats list <session> | show <chat>",
        runs: &[
            &["chats", "list", "hearth-session:replay/0000"],
            &["chats", "show", "hearth-chat:replay/0000/default"],
        ],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth calendar list | events --from 2026-12-01 --to 2026-12-08 | add | import F.ics | export",
        runs: &[
            &["calendar", "list"],
            &[
                "calendar",
                "events",
                "--from",
                "2026-12-01",
                "--to",
                "2026-12-08",
            ],
            &["calendar", "add", "Dentist", "--start", "2026-12-03T09:00"],
            &["calendar", "import", "F.ics"],
            &["calendar", "export"],
        ],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth calendar add --caldav https://caldav.fastmail.com/ --username me@example.com --password-env FASTMAIL_APP_PASSWORD --save",
        runs: &[&[
            "calendar",
            "add",
            "--caldav",
            CLOSED,
            "--username",
            "me@example.com",
            "--password-env",
            "FASTMAIL_APP_PASSWORD",
            "--save",
        ]],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth calendar sync",
        runs: &[&["calendar", "sync"]],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth tools list | call <tool> '<json>'",
        runs: &[
            &["tools", "list"],
            &["tools", "call", "calendar_list", "{}"],
        ],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth proposals list | show <id> | approve <id> [--hash H | --yes] | reject <id>",
        runs: &[
            &["proposals", "list"],
            &["proposals", "show", "0000"],
            &["proposals", "approve", "0000", "--yes"],
            &["proposals", "reject", "0000"],
        ],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth permissions list | allow <id> | reject <id>",
        runs: &[
            &["permissions", "list"],
            &["permissions", "allow", "0000"],
            &["permissions", "reject", "0000"],
        ],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth audit list | verify | export",
        runs: &[
            &["audit", "list"],
            &["audit", "verify"],
            &["audit", "export"],
        ],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth serve",
        runs: &[&["serve", "--port", "0"]],
        expect: Expect::Serves,
    },
    Step {
        readme: "hearth login",
        runs: &[&["login"]],
        expect: Expect::Answer,
    },
    Step {
        readme: "hearth app-server --stdio",
        runs: &[&["app-server", "--stdio"]],
        expect: Expect::Success,
    },
    Step {
        readme: "hearth mcp --stdio",
        runs: &[&["mcp", "--stdio"]],
        expect: Expect::Success,
    },
    Step {
        readme: "hearth mcp list",
        runs: &[&["mcp", "list"]],
        expect: Expect::Success,
    },
    Step {
        readme: "hearth mcp add notes -- notes-mcp --db x",
        // Added, shown and removed again: a server that cannot start stays out of the
        // other steps.
        runs: &[
            &["mcp", "add", "notes", "--", "notes-mcp", "--db", "x"],
            &["mcp", "get", "notes"],
            &["mcp", "remove", "notes"],
        ],
        expect: Expect::Success,
    },
    Step {
        readme: "hearth acp",
        runs: &[&["acp"]],
        expect: Expect::Success,
    },
];

/// The commands every run of the README must get right, whatever ran before: those the
/// README presents as working with no setup.
fn must_succeed(args: &[&str]) -> bool {
    matches!(
        args,
        ["run", ..]
            | ["agents", "list"]
            | ["providers", "list"]
            | ["projects", "list"]
            | ["context", "status" | "gc" | "clear"]
            | ["sessions", "list"]
            | ["calendar", "list" | "events" | "export" | "sync" | "import"]
            | ["tools", "list"]
            | ["proposals", "list"]
            | ["audit", "list" | "verify" | "export"]
            | ["mcp", "list"]
    ) && !matches!(
        args,
        ["run", "--provider" | "--session" | "--agent" | "-c", ..]
    )
}

/// The command lines of the README's `sh` blocks that run Hearth, as written.
fn readme_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let mut commands = Vec::new();
    let mut in_shell = false;
    for line in readme.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_shell = trimmed == "```sh";
            continue;
        }
        if !in_shell {
            continue;
        }
        let command = trimmed.split(" #").next().unwrap_or_default().trim();
        if command.starts_with("hearth ") || command.starts_with("cargo run --release -- ") {
            commands.push(command.to_owned());
        }
    }
    commands
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A machine where Hearth never ran: a `HOME` of its own, a working directory of its own,
/// none of Hearth's or the providers' variables.
struct FreshMachine {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl FreshMachine {
    fn new() -> Self {
        let machine = Self {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
        };
        std::fs::write(machine.work.path().join("notes.md"), "# Notes\n").unwrap();
        std::fs::write(
            machine.work.path().join("F.ics"),
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//readme//EN\r\nBEGIN:VEVENT\r\n\
             UID:readme-1@test\r\nDTSTAMP:20261201T000000Z\r\nDTSTART:20261202T090000Z\r\n\
             DTEND:20261202T100000Z\r\nSUMMARY:Imported\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
        )
        .unwrap();
        machine
    }

    /// Where the platform puts Hearth's data on Linux.
    fn data_dir(&self) -> PathBuf {
        self.home.path().join(".local/share/hearth")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_hearth"));
        command
            .args(args)
            .current_dir(self.work.path())
            .env("HOME", self.home.path())
            .env("HEARTH_REPLAY_DELAY_SCALE", "0")
            .stdin(Stdio::null());
        for variable in [
            "HEARTH_HOME",
            "HEARTH_CONFIG",
            "HEARTH_SERVER",
            "HEARTH_REPLAY_SCENARIO",
            "XDG_DATA_HOME",
            "XDG_CONFIG_HOME",
            "XDG_CACHE_HOME",
            "XDG_STATE_HOME",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "OLLAMA_HOST",
            "NPM_CONFIG_PREFIX",
            "FASTMAIL_APP_PASSWORD",
        ] {
            command.env_remove(variable);
        }
        command
    }

    /// Runs one step's commands; returns one line per command for the failure report.
    fn run(&self, step: &Step) -> Vec<String> {
        step.runs
            .iter()
            .map(|args| match step.expect {
                Expect::Serves => self.serve(args),
                expect => self.run_one(args, expect),
            })
            .collect()
    }

    fn run_one(&self, args: &[&str], expect: Expect) -> String {
        let output = self.command(args).output_within(PROCESS_WAIT);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let what = format!("hearth {args:?} → {}\nstderr: {stderr}", output.status);
        self.assert_nothing_about_the_data_dir(&stderr, &what);
        if matches!(expect, Expect::Success) || must_succeed(args) {
            assert!(output.status.success(), "{what}\nstdout: {stdout}");
        }
        if matches!(expect, Expect::Report) {
            assert!(!stdout.trim().is_empty(), "a report: {what}");
        } else if !output.status.success() {
            assert!(
                stderr.contains("hearth: error: "),
                "a failure must say what failed: {what}"
            );
        }
        if args == ["run", "hello"] {
            assert!(!stdout.trim().is_empty(), "the demo answers: {what}");
        }
        what
    }

    fn serve(&self, args: &[&str]) -> String {
        let mut child = self
            .command(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let record = hearth_server::server_file(&self.data_dir());
        let deadline = Instant::now() + PROCESS_WAIT;
        while hearth_server::read_record(&record).is_none() {
            if let Some(status) = child.try_wait().unwrap() {
                let output = child.wait_with_output().unwrap();
                panic!(
                    "hearth {args:?} ended ({status}) on a new machine:\n{}",
                    String::from_utf8_lossy(&output.stderr)
                );
            }
            assert!(Instant::now() < deadline, "hearth {args:?} did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let output =
            hearth_test_support::BoundedChild::wait_with_output_within(child, PROCESS_WAIT);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(
            stderr.contains("Agent Home: open http://127.0.0.1:"),
            "serve prints its login link: {stderr}"
        );
        format!("hearth {args:?} served and stopped")
    }

    fn assert_nothing_about_the_data_dir(&self, stderr: &str, what: &str) {
        let data_dir = self.data_dir().to_string_lossy().into_owned();
        assert!(
            !stderr
                .lines()
                .any(|line| line.contains(&data_dir) && line.contains("No such file or directory")),
            "a command failed on the missing data directory: {what}"
        );
        // Every file a command made in the data directory was made private: Hearth
        // never has to narrow what it made itself.
        assert!(
            !stderr.contains("readable by you only"),
            "a command made a file others can read in the data directory: {what}"
        );
    }

    /// The data directory is there and private once a command has run.
    fn assert_data_dir_private(&self) {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(self.data_dir())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700, "{}", self.data_dir().display());
    }
}

fn step_for(command: &str) -> Option<&'static Step> {
    STEPS.iter().find(|step| step.readme == command)
}

#[test]
fn the_table_holds_every_command_of_the_readme() {
    let commands = readme_commands();
    assert!(commands.len() >= 30, "{commands:#?}");
    let missing: Vec<_> = commands
        .iter()
        .filter(|command| step_for(command).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "README commands this test does not run (add them to STEPS): {missing:#?}"
    );
    let stale: Vec<_> = STEPS
        .iter()
        .filter(|step| !commands.iter().any(|command| command == step.readme))
        .map(|step| step.readme)
        .collect();
    assert!(
        stale.is_empty(),
        "STEPS no longer in the README: {stale:#?}"
    );
}

fn run_in_order(order: impl Iterator<Item = String>) {
    let machine = FreshMachine::new();
    assert!(!machine.data_dir().exists());
    for command in order {
        let step =
            step_for(&command).unwrap_or_else(|| panic!("no step for the README's `{command}`"));
        machine.run(step);
        machine.assert_data_dir_private();
    }
    // Nothing was written outside the fresh HOME's data and config directories, and
    // the working directory (where `projects new` puts its project.md).
    assert!(machine.data_dir().join("hearth.db").exists());
}

#[test]
fn every_readme_command_runs_on_a_new_machine_in_the_readmes_order() {
    run_in_order(readme_commands().into_iter());
}

#[test]
fn every_readme_command_runs_on_a_new_machine_in_reverse_order() {
    run_in_order(readme_commands().into_iter().rev());
}

#[test]
fn serve_alone_starts_on_a_new_machine() {
    // The issue as found: `serve` first, on a machine where nothing made the data
    // directory before it, also under an explicit `--home` that does not exist.
    let machine = FreshMachine::new();
    machine.serve(&["serve", "--port", "0"]);
    machine.assert_data_dir_private();
    let other = machine.home.path().join("new/home");
    let mut child = machine
        .command(&["--home", &other.to_string_lossy(), "serve", "--port", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let record = hearth_server::server_file(&other);
    let deadline = Instant::now() + PROCESS_WAIT;
    while hearth_server::read_record(&record).is_none() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "serve --home NEW_DIR ended"
        );
        assert!(
            Instant::now() < deadline,
            "serve --home NEW_DIR did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_private(&other);
}

fn assert_private(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "{}", path.display());
}
