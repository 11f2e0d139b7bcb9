//! What the model is told: staged proposals, unknown tools, invalid arguments, failures.

use hearth_core::StagedProposal;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Bench, context, on_every_backend};

on_every_backend!(
    a_staged_proposal_tells_the_model_what_awaits_approval,
    unknown_tools_and_invalid_arguments_come_back_as_errors_to_act_on,
);

async fn a_staged_proposal_tells_the_model_what_awaits_approval(bench: Bench) {
    std::fs::write(bench.note("a.md"), "old text").unwrap();
    let outcome = bench
        .toolbox()
        .call(
            &context(),
            "note_write",
            json!({"name": "a.md", "text": "new text"}),
        )
        .await;
    assert!(!outcome.is_error);
    let staged = outcome.proposal.clone().unwrap();
    let proposal = bench.proposal(&staged.id).await;
    assert_eq!(
        staged,
        StagedProposal {
            id: proposal.id.clone(),
            summary: "Write note 'a.md'".to_owned(),
        }
    );
    let expires = proposal.expires_at.format("%Y-%m-%d %H:%M UTC");
    assert_eq!(
        outcome.content,
        format!(
            "Staged proposal {} for the user's approval: Write note 'a.md'\n\
             Nothing has been changed yet: the change is made only if the user approves this \
             proposal in Hearth, and it expires at {expires} if they do not. Tell the user what \
             awaits their approval; do not stage the same change again.\n\n\
             Proposed change:\n- old text\n+ new text",
            proposal.id
        )
    );
    assert_eq!(bench.note_text("a.md").as_deref(), Some("old text"));
}

async fn unknown_tools_and_invalid_arguments_come_back_as_errors_to_act_on(bench: Bench) {
    let toolbox = bench.toolbox();
    let unknown = toolbox.call(&context(), "web_search", json!({})).await;
    assert!(unknown.is_error);
    assert_eq!(
        unknown.content,
        "no such tool `web_search`; the available tools are: echo, fail, note_write"
    );
    let invalid = toolbox
        .call(&context(), "note_write", json!({"name": 3}))
        .await;
    assert!(invalid.is_error);
    assert_eq!(
        invalid.content,
        "invalid arguments for `note_write`: arguments: missing required property `text`; \
         arguments.name: expected a string, got the number 3. Call `note_write` again with \
         arguments that match its parameters."
    );
    let refused = toolbox
        .call(
            &context(),
            "note_write",
            json!({"name": "../x", "text": "t"}),
        )
        .await;
    assert!(refused.is_error);
    assert_eq!(
        refused.content,
        "`note_write`: invalid arguments: `../x` is not a note name"
    );
    let ran = toolbox
        .call(&context(), "echo", serde_json::Value::Null)
        .await;
    assert!(
        ran.is_error,
        "null arguments are an empty object, which lacks `text`"
    );
    let ran = toolbox
        .call(&context(), "echo", json!({"text": "hi"}))
        .await;
    assert_eq!((ran.content.as_str(), ran.is_error), ("echo: hi", false));
}
