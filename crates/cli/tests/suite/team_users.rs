//! A team server's users from the command line: `hearth users` adds them and prints
//! their API tokens; `hearth serve --users` admits them; each sees only their own
//! sessions (the operator sees all); a revoked token stops working at once.

use super::serve_support::Served;
use super::support::Hearth;

/// The token `hearth users add` or `hearth users token` printed (its last line).
fn token_in(printed: &str) -> String {
    let token = printed.lines().last().unwrap_or_default().trim().to_owned();
    assert_eq!(token.len(), 64, "a token is 64 hex digits: {printed:?}");
    token
}

/// `hearth --server URL ARGS` as the holder of `token` (`None`: the operator).
fn as_user(served: &Served, token: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut command = served.hearth.command();
    if let Some(token) = token {
        command.env("HEARTH_TOKEN", token);
    }
    command
        .args(["--server", &served.url])
        .args(args)
        .output()
        .unwrap()
}

fn sessions(served: &Served, token: Option<&str>) -> Vec<serde_json::Value> {
    let output = as_user(served, token, &["sessions", "list", "--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn each_user_sees_their_own_sessions_and_a_revoked_token_stops_at_once() {
    let hearth = Hearth::new();
    let alice = token_in(&hearth.ok(&["users", "add", "alice", "--team", "design"]));
    let bob = token_in(&hearth.ok(&["users", "add", "bob"]));
    let listed = hearth.ok(&["users", "list", "--json"]);
    assert!(
        listed.contains("\"alice\"") && listed.contains("\"design\""),
        "{listed}"
    );
    assert!(
        hearth
            .fails(&["users", "add", "Alice"])
            .contains("already exists"),
        "a name is taken whatever its case"
    );
    let served = Served::start(hearth, &["--users"], &[]);

    let ran = as_user(&served, Some(&alice), &["run", "hello from alice"]);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let hers = sessions(&served, Some(&alice));
    assert_eq!(hers.len(), 1, "{hers:?}");
    assert!(sessions(&served, Some(&bob)).is_empty());
    assert_eq!(
        sessions(&served, None).len(),
        1,
        "the operator sees every session"
    );

    // A new token works beside the first; revoking ends both at once.
    let again = token_in(&served.hearth.ok(&["users", "token", "bob"]));
    assert!(sessions(&served, Some(&again)).is_empty());
    served.hearth.ok(&["users", "revoke", "bob"]);
    let refused = as_user(&served, Some(&bob), &["sessions", "list"]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("token"), "{said}");
    assert_eq!(sessions(&served, Some(&alice)).len(), 1);
}
