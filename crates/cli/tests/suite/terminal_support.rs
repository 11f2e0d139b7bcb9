//! A real pseudo-terminal for `hearth chat`: the binary runs under `script`, which gives
//! it a terminal and copies the bytes a test writes to it (keys, escape sequences, a
//! bracketed paste) as typed; what the binary shows is collected as it arrives.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a screen update may take before the test fails.
const SCREEN_WAIT: Duration = Duration::from_secs(30);

/// Keys as a terminal sends them.
pub mod keys {
    pub const ENTER: &str = "\r";
    pub const LEFT: &str = "\x1b[D";
    pub const UP: &str = "\x1b[A";
    pub const CTRL_D: &str = "\x04";
    pub const ALT_ENTER: &str = "\x1b\r";
    /// Text pasted into a terminal that brackets pastes (newlines arrive as CR).
    pub fn paste(text: &str) -> String {
        format!("\x1b[200~{}\x1b[201~", text.replace('\n', "\r"))
    }
}

/// Quotes a word for `sh -c`.
fn sh_quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// `command` run on a terminal of its own (`script` gives it one: stdin, stdout and
/// stderr are the terminal, all read from the returned command's stdout), with the
/// same environment and working directory; stdin, stdout and stderr piped.
pub fn on_a_terminal(command: &Command) -> Command {
    script(command, "")
}

/// `script` running `command` after the shell text `before`, with its environment and
/// working directory.
fn script(command: &Command, before: &str) -> Command {
    let mut words = vec![command.get_program().to_string_lossy().into_owned()];
    words.extend(
        command
            .get_args()
            .map(|arg| arg.to_string_lossy().into_owned()),
    );
    let line: Vec<String> = words.iter().map(|word| sh_quoted(word)).collect();
    let mut terminal = Command::new("script");
    terminal
        .args([
            "-q",
            "-e",
            "-c",
            &format!("{before}{}", line.join(" ")),
            "/dev/null",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(directory) = command.get_current_dir() {
        terminal.current_dir(directory);
    }
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => terminal.env(name, value),
            None => terminal.env_remove(name),
        };
    }
    terminal
}

/// A command running on a terminal of its own.
pub struct Terminal {
    child: Child,
    input: Option<ChildStdin>,
    reader: Option<std::thread::JoinHandle<()>>,
    screen: Arc<Mutex<Vec<u8>>>,
    /// How much of the screen earlier waits consumed.
    seen: usize,
}

impl Terminal {
    /// Starts `command` (its program, arguments, directory and environment) on a terminal
    /// of 120 columns.
    pub fn start(command: &Command) -> Self {
        let mut terminal = script(command, "stty cols 120 rows 40; exec ");
        if !command.get_envs().any(|(name, _)| name == "TERM") {
            terminal.env("TERM", "xterm-256color");
        }
        let mut child = terminal.spawn().expect("script (util-linux) runs");
        let screen = Arc::new(Mutex::new(Vec::new()));
        let mut output = child.stdout.take().unwrap();
        let collected = Arc::clone(&screen);
        let reader = std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            loop {
                match output.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(read) => collected.lock().unwrap().extend_from_slice(&buffer[..read]),
                }
            }
        });
        Self {
            input: child.stdin.take(),
            reader: Some(reader),
            child,
            screen,
            seen: 0,
        }
    }

    /// Types `keys`.
    pub fn type_keys(&mut self, keys: &str) {
        let input = self.input.as_mut().expect("the terminal is open");
        input.write_all(keys.as_bytes()).unwrap();
        input.flush().unwrap();
    }

    /// Everything shown so far, as text.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().unwrap()).into_owned()
    }

    /// Waits until `text` shows after what earlier waits saw; fails the test with the
    /// screen after [`SCREEN_WAIT`].
    pub fn wait_for(&mut self, text: &str) {
        let deadline = Instant::now() + SCREEN_WAIT;
        loop {
            let screen = self.screen();
            if let Some(at) = screen.get(self.seen..).and_then(|rest| rest.find(text)) {
                self.seen += at + text.len();
                return;
            }
            assert!(
                Instant::now() < deadline,
                "`{text}` never showed; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits for the program to end; returns whether it succeeded, and the screen.
    pub fn finish(mut self) -> (bool, String) {
        drop(self.input.take());
        let deadline = Instant::now() + SCREEN_WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // The reader ends with the terminal, after its last bytes.
                if let Some(reader) = self.reader.take() {
                    reader.join().unwrap();
                }
                return (status.success(), self.screen());
            }
            if Instant::now() > deadline {
                let _ignored = self.child.kill();
                panic!("the program did not end; the screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ignored = self.child.kill();
        let _ignored = self.child.wait();
    }
}
