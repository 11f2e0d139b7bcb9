//! `hearth trash`: a deleted session is listed in the trash with when it is erased, comes
//! back with `trash restore` (by the start of its id), and is erased by `trash empty`
//! (only what is old enough with `--older-than`), audited; `[history] trash_days` erases
//! what stayed longer by itself, audited, and `trash_days = 0` keeps everything.

use hearth_test_support::OpenAiStream;
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::mock::{MODEL, configure, mock_config, ok, server};
use super::support::Hearth;
use super::tool_support::{audit_rows, tamper};

fn trash_json(hearth: &Hearth) -> Vec<Value> {
    hearth
        .ok(&["trash", "list", "--json"])
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn one_session(hearth: &Hearth, prompt: &str) -> String {
    let server = server();
    configure(hearth, &mock_config(&server));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["noted"], 1, 1));
    ok(hearth, &["run", prompt]);
    hearth.session_uris().remove(0)
}

#[test]
fn a_deleted_session_is_restored_from_the_trash_or_erased_with_an_audit_entry() {
    let hearth = Hearth::new();
    let session = one_session(&hearth, "remember the herons");
    let (_, said) = ok(&hearth, &["sessions", "delete", &session]);
    assert!(said.contains("hearth trash restore"), "{said}");
    assert!(hearth.session_uris().is_empty());
    let items = trash_json(&hearth);
    assert_eq!(items.len(), 1);
    assert_eq!(
        (items[0]["kind"].as_str(), items[0]["id"].as_str()),
        (Some("session"), Some(session.as_str()))
    );
    assert!(items[0]["purgeAt"].is_string(), "{items:?}");
    let id = session.rsplit('/').next().unwrap();
    let listed = hearth.ok(&["trash", "list"]);
    assert!(listed.starts_with(id), "{listed}");
    assert!(listed.contains("remember the herons"), "{listed}");

    let restored = hearth.ok(&["trash", "restore", &id[..8]]);
    assert_eq!(restored, format!("restored session {session}\n"));
    assert_eq!(hearth.session_uris(), vec![session.clone()]);
    assert_eq!(hearth.ok(&["trash", "list"]), "The trash is empty.\n");
    let error = hearth.fails(&["trash", "restore", &id[..8]]);
    assert!(error.contains("nothing in the trash"), "{error}");

    hearth.ok(&["sessions", "delete", &session]);
    let kept = hearth.ok(&["trash", "empty", "--older-than", "1"]);
    assert_eq!(kept, "Erased 0 items from the trash.\n");
    assert_eq!(trash_json(&hearth).len(), 1);
    assert_eq!(
        hearth.ok(&["trash", "empty"]),
        "Erased 1 item from the trash.\n"
    );
    assert!(trash_json(&hearth).is_empty());
    let error = hearth.fails(&["sessions", "show", &session]);
    assert!(error.contains("was deleted"), "{error}");
    let rows = audit_rows(&hearth);
    let erased: Vec<&Value> = rows.iter().filter(|row| row["kind"] == "trash").collect();
    assert_eq!(erased.len(), 2, "{rows:?}");
    assert_eq!(erased[1]["outcome"], "ok: 1 erased");
    assert_eq!(erased[1]["detail"]["items"][0]["id"], session.as_str());
}

#[test]
fn trash_days_erases_what_stayed_longer_and_zero_keeps_it() {
    let hearth = Hearth::new();
    let session = one_session(&hearth, "an old thought");
    hearth.ok(&["sessions", "delete", &session]);
    // Deleted 40 days ago.
    tamper(
        &hearth.database(),
        &["UPDATE sessions SET deleted_at = deleted_at - 40 * 86400000 WHERE trashed = 1"],
    );
    let config = std::fs::read_to_string(hearth.home.path().join("config.toml")).unwrap();
    configure(&hearth, &format!("{config}\n[history]\ntrash_days = 0\n"));
    let items = trash_json(&hearth);
    assert_eq!(items.len(), 1);
    assert!(items[0]["purgeAt"].is_null(), "{items:?}");

    configure(&hearth, &format!("{config}\n[history]\ntrash_days = 30\n"));
    // Any command that opens the store erases it.
    assert!(trash_json(&hearth).is_empty());
    let rows = audit_rows(&hearth);
    let erased = rows
        .iter()
        .find(|row| row["kind"] == "trash")
        .expect("an audit entry");
    assert_eq!(erased["actor"], "hearth");
    assert_eq!(erased["detail"]["why"], "trash_days");
}
