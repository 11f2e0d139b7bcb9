//! A web server on an "outside" address: a network namespace made by the test, joined to
//! this one by a veth pair, holding a public-looking address that only this machine
//! routes (to that pair). Hearth's guarded fetcher refuses loopback and private
//! addresses, so this is how a test plays a public host — one that receives what
//! Hearth sends it, and records every request — without sending anything off the
//! machine. Needs root (CI runs as root); without it the test is skipped with the
//! reason, unless `HEARTH_REQUIRE_NETNS=1`.

use std::io::{BufRead, BufReader};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU8, Ordering};

/// The server's script.
const SERVER: &str = include_str!("outside/server.py");

/// The port the outside server listens on.
pub const OUTSIDE_PORT: u16 = 8080;

/// A network namespace with a web server in it.
pub struct OutsideHost {
    namespace: String,
    host_link: String,
    server: Child,
    address: Ipv4Addr,
    root: tempfile::TempDir,
    log: PathBuf,
}

/// Which /30 the next host of this process takes.
static NEXT: AtomicU8 = AtomicU8::new(0);

fn ip(args: &[&str]) -> Result<(), String> {
    let output = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| format!("cannot run `ip`: {error}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

impl OutsideHost {
    /// Makes the namespace and starts the server in it; `None` (the test skipped, saying
    /// why) when this machine cannot, unless `HEARTH_REQUIRE_NETNS=1`.
    #[allow(clippy::print_stderr)]
    pub fn start() -> Option<Self> {
        match Self::try_start() {
            Ok(host) => Some(host),
            Err(reason) => {
                assert!(
                    std::env::var("HEARTH_REQUIRE_NETNS").as_deref() != Ok("1"),
                    "HEARTH_REQUIRE_NETNS=1 but no outside host: {reason}"
                );
                eprintln!("skipped: no outside host ({reason}); it needs root and iproute2");
                None
            }
        }
    }

    fn try_start() -> Result<Self, String> {
        let pid = std::process::id();
        let serial = NEXT.fetch_add(1, Ordering::Relaxed);
        // 45.0.0.0/8 is ordinary public space; each host takes its own /30 of it,
        // routed only to its veth pair.
        let block = [
            45,
            (pid % 200) as u8 + 20,
            ((pid / 200) % 250) as u8,
            serial * 4,
        ];
        let host_address = Ipv4Addr::new(block[0], block[1], block[2], block[3] + 1);
        let address = Ipv4Addr::new(block[0], block[1], block[2], block[3] + 2);
        let tag = format!("{}{serial}", pid % 100_000);
        let namespace = format!("hearth-out-{tag}");
        let host_link = format!("hoh{tag}");
        let inner_link = format!("hoi{tag}");
        ip(&["netns", "add", &namespace])?;
        let mut host = Self {
            namespace: namespace.clone(),
            host_link: host_link.clone(),
            server: Command::new("true")
                .spawn()
                .map_err(|error| error.to_string())?,
            address,
            root: tempfile::tempdir().map_err(|error| error.to_string())?,
            log: PathBuf::new(),
        };
        ip(&[
            "link",
            "add",
            &host_link,
            "type",
            "veth",
            "peer",
            "name",
            &inner_link,
        ])?;
        ip(&["link", "set", &inner_link, "netns", &namespace])?;
        ip(&[
            "addr",
            "add",
            &format!("{host_address}/30"),
            "dev",
            &host_link,
        ])?;
        ip(&["link", "set", &host_link, "up"])?;
        let inside = |args: &[&str]| {
            let mut all = vec!["netns", "exec", namespace.as_str(), "ip"];
            all.extend_from_slice(args);
            ip(&all)
        };
        inside(&["addr", "add", &format!("{address}/30"), "dev", &inner_link])?;
        inside(&["link", "set", &inner_link, "up"])?;
        inside(&["link", "set", "lo", "up"])?;
        let script = host.root.path().join(".server.py");
        std::fs::write(&script, SERVER).map_err(|error| error.to_string())?;
        host.log = host.root.path().join(".requests.log");
        std::fs::write(&host.log, "").map_err(|error| error.to_string())?;
        host.server = Command::new("ip")
            .args(["netns", "exec", &namespace, "python3"])
            .arg(&script)
            .arg(address.to_string())
            .arg(OUTSIDE_PORT.to_string())
            .arg(host.root.path())
            .arg(&host.log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|error| format!("cannot start the outside server: {error}"))?;
        let stdout = host.server.stdout.take().ok_or("no stdout")?;
        let mut ready = String::new();
        BufReader::new(stdout)
            .read_line(&mut ready)
            .map_err(|error| error.to_string())?;
        if ready.trim() != "ready" {
            return Err(format!("the outside server did not start ({ready:?})"));
        }
        Ok(host)
    }

    /// The host's address.
    pub fn address(&self) -> Ipv4Addr {
        self.address
    }

    /// `http://<address>:8080<path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}:{OUTSIDE_PORT}{path}", self.address)
    }

    /// Serves `bytes` at `/<name>` (its type from the name's extension).
    pub fn serve(&self, name: &str, bytes: &[u8]) {
        std::fs::write(self.root.path().join(name), bytes).unwrap();
    }

    /// The files' folder.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// Every request received so far: `GET /path?query`.
    pub fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Drop for OutsideHost {
    fn drop(&mut self) {
        self.server.kill().ok();
        self.server.wait().ok();
        ip(&["link", "del", &self.host_link]).ok();
        ip(&["netns", "del", &self.namespace]).ok();
    }
}
