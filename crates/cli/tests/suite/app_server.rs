//! `hearth app-server --stdio`: the protocol as JSON Lines for editors.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use hearth_test_support::{BoundedChild, PROCESS_WAIT};
use serde_json::{Value, json};

use super::support::Hearth;

#[test]
fn app_server_speaks_json_lines_on_stdin_and_stdout() {
    let hearth = Hearth::new();
    let mut child = hearth
        .command()
        .args(["app-server", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut call = |message: Value| -> Value {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
        loop {
            let line = lines.next().expect("a response").unwrap();
            let value: Value = serde_json::from_str(&line).unwrap();
            if value.get("id") == message.get("id") {
                return value;
            }
        }
    };
    let info = call(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "editor"}}}),
    );
    assert_eq!(info["result"]["serverInfo"]["name"], "hearth");
    assert!(
        info["result"]["harnesses"]
            .as_array()
            .unwrap()
            .iter()
            .any(|harness| harness["id"] == "replay" && harness["demo"] == true)
    );
    let created = call(
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/create", "params": {"provider": "replay"}}),
    );
    let session = created["result"]["session"]["summary"]["uri"]
        .as_str()
        .unwrap();
    assert!(session.starts_with("hearth-session:replay/"));
    let listed = call(json!({"jsonrpc": "2.0", "id": 3, "method": "session/list"}));
    assert_eq!(listed["result"]["sessions"][0]["uri"], session);
    let unknown = call(json!({"jsonrpc": "2.0", "id": 4, "method": "session/explode"}));
    assert_eq!(unknown["error"]["code"], -32601);
    drop(stdin);
    let status = child.wait_within(PROCESS_WAIT);
    assert!(status.success());
}
