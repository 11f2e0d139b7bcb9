//! Hearth's tools through MCP (the `/mcp` endpoint of the real server, and `hearth mcp
//! --stdio`), and a proposal staged there approved by another client over the protocol.

use hearth_protocol::{
    AuditList, AuditListParams, ProposalApprove, ProposalApproveParams, ProposalList,
    ProposalListParams, ProposalReject, ProposalRejectParams, ProposalStatus,
};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Map, Value, json};

use super::serve_support::Served;
use super::tool_support::with_calendar;

fn arguments(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("not an object"),
    }
}

/// An rmcp client on the server's `/mcp`, with the token.
async fn mcp_client(served: &Served) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", served.url))
            .auth_header(served.token.expose()),
    );
    ().serve(transport).await.unwrap()
}

#[tokio::test]
async fn an_mcp_client_stages_a_change_that_another_client_approves() {
    let (hearth, calendar) = with_calendar();
    let served = Served::start(hearth, &[], &[]);
    let mcp = mcp_client(&served).await;
    let tools = mcp.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    for expected in ["calendar_list", "event_create", "web_fetch"] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let listed = mcp
        .call_tool(CallToolRequestParams::new("calendar_list").with_arguments(Map::new()))
        .await
        .unwrap();
    assert_eq!(listed.is_error, Some(false), "{listed:?}");
    let staged = mcp
        .call_tool(
            CallToolRequestParams::new("event_create").with_arguments(arguments(
                json!({"title": "Dentist", "start": "2030-03-04T09:00"}),
            )),
        )
        .await
        .unwrap();
    assert_eq!(staged.is_error, Some(false), "{staged:?}");
    let proposal_id = staged.structured_content.unwrap()["proposalId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!calendar.exists(), "staging must not write");
    mcp.cancel().await.unwrap();

    let (reviewer, _notes) = served.client().await;
    let pending = reviewer
        .call::<ProposalList>(&ProposalListParams {
            statuses: vec![ProposalStatus::Pending],
            ..ProposalListParams::default()
        })
        .await
        .unwrap();
    let proposal = pending
        .proposals
        .iter()
        .find(|proposal| proposal.id == proposal_id)
        .expect("the staged proposal is listed");
    assert!(proposal.session.starts_with("hearth-session:mcp/"));
    let decided = reviewer
        .call::<ProposalApprove>(&ProposalApproveParams {
            proposal_id: proposal_id.clone(),
            payload_hash: proposal.payload_hash.clone(),
        })
        .await
        .unwrap();
    assert_eq!(decided.proposal.status, ProposalStatus::Applied);
    assert!(decided.changed);
    let written = std::fs::read_to_string(&calendar).unwrap();
    assert!(written.contains("SUMMARY:Dentist"), "{written}");
    let audit = reviewer
        .call::<AuditList>(&AuditListParams::default())
        .await
        .unwrap();
    assert!(
        audit
            .entries
            .iter()
            .any(
                |entry| entry.proposal_id.as_deref() == Some(proposal_id.as_str())
                    && entry.decision == "applied"
            ),
        "{:?}",
        audit.entries
    );
}

#[tokio::test]
async fn hearth_mcp_stdio_lends_the_tools() {
    let (hearth, _calendar) = with_calendar();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_hearth"));
    command
        .arg("--home")
        .arg(hearth.home.path())
        .args(["mcp", "--stdio"])
        .env_remove("HEARTH_HOME")
        .env_remove("HEARTH_CONFIG");
    let mcp = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let tools = mcp.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|tool| tool.name == "event_create"));
    let listed = mcp
        .call_tool(CallToolRequestParams::new("calendar_list").with_arguments(Map::new()))
        .await
        .unwrap();
    assert_eq!(listed.is_error, Some(false), "{listed:?}");
    mcp.cancel().await.unwrap();
}

#[tokio::test]
async fn web_fetch_refuses_the_port_the_server_really_listens_on() {
    let (hearth, _calendar) = with_calendar();
    // Lent tools reach only allowed sites (the data-flow guard); allowing loopback here
    // lets the request through to the fetcher, whose own rule is what is tested.
    let config = hearth.home.path().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    hearth.write(
        "config.toml",
        &format!("{text}\n[fetch]\nallow = [\"127.0.0.1\"]\n"),
    );
    let served = Served::start(hearth, &[], &[]);
    // `--port 0` picked a port no configuration names: the tools must still deny it,
    // before asking whether the address is loopback.
    let own = format!("http://127.0.0.1:{}/health", served.port);
    let mcp = mcp_client(&served).await;
    let fetched = mcp
        .call_tool(
            CallToolRequestParams::new("web_fetch").with_arguments(arguments(json!({"url": own}))),
        )
        .await
        .unwrap();
    assert_eq!(fetched.is_error, Some(true), "{fetched:?}");
    let text = format!("{:?}", fetched.content);
    assert!(
        text.contains(&format!(
            "port {} is Hearth's own listening port",
            served.port
        )),
        "{text}"
    );
    mcp.cancel().await.unwrap();

    // A command run in-process beside the server denies it too (from server.json).
    let output = served.hearth.run(&[
        "--local",
        "tools",
        "call",
        "web_fetch",
        &json!({"url": own}).to_string(),
    ]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        format!("{stdout}{stderr}").contains("Hearth's own listening port"),
        "{stdout}{stderr}"
    );
}

#[tokio::test]
async fn a_change_rejected_over_the_protocol_is_never_written_nor_approvable() {
    let (hearth, calendar) = with_calendar();
    let served = Served::start(hearth, &[], &[]);
    let mcp = mcp_client(&served).await;
    let staged = mcp
        .call_tool(
            CallToolRequestParams::new("event_create").with_arguments(arguments(
                json!({"title": "Cancelled trip", "start": "2030-05-01T08:00"}),
            )),
        )
        .await
        .unwrap();
    let proposal_id = staged.structured_content.unwrap()["proposalId"]
        .as_str()
        .unwrap()
        .to_owned();
    mcp.cancel().await.unwrap();

    let (reviewer, _notes) = served.client().await;
    let rejected = reviewer
        .call::<ProposalReject>(&ProposalRejectParams {
            proposal_id: proposal_id.clone(),
            reason: Some("not this year".into()),
        })
        .await
        .unwrap();
    assert_eq!(rejected.proposal.status, ProposalStatus::Rejected);
    assert_eq!(rejected.proposal.reason.as_deref(), Some("not this year"));
    assert!(rejected.changed);
    let approve = reviewer
        .call::<ProposalApprove>(&ProposalApproveParams {
            proposal_id: proposal_id.clone(),
            payload_hash: rejected.proposal.payload_hash.clone(),
        })
        .await;
    assert!(approve.is_err(), "{approve:?}");
    assert!(!calendar.exists(), "a rejected change is never written");
    let again = reviewer
        .call::<ProposalReject>(&ProposalRejectParams {
            proposal_id,
            reason: None,
        })
        .await
        .unwrap();
    assert!(!again.changed, "rejecting twice changes nothing");
}

/// An rmcp client on the server's `/mcp` with a user's token.
async fn user_mcp_client(
    served: &Served,
    token: &str,
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", served.url))
            .auth_header(token),
    );
    ().serve(transport).await.unwrap()
}

#[tokio::test]
async fn a_users_mcp_client_reaches_only_the_calendars_granted_to_them() {
    let (hearth, calendar) = with_calendar();
    let token = |printed: String| printed.lines().last().unwrap().trim().to_owned();
    let alice = token(hearth.ok(&["users", "add", "alice"]));
    let bob = token(hearth.ok(&["users", "add", "bob"]));
    hearth.ok(&["users", "grant", "alice", "member", "calendar:home"]);
    let served = Served::start(hearth, &["--users"], &[]);
    let event =
        arguments(json!({"calendar": "home", "title": "Review", "start": "2030-03-04T09:00"}));

    let bobs = user_mcp_client(&served, &bob).await;
    let refused = bobs
        .call_tool(CallToolRequestParams::new("event_create").with_arguments(event.clone()))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true), "{refused:?}");
    let said = serde_json::to_string(&refused.content).unwrap();
    assert!(said.contains("not granted"), "{said}");
    bobs.cancel().await.unwrap();

    let alices = user_mcp_client(&served, &alice).await;
    let staged = alices
        .call_tool(CallToolRequestParams::new("event_create").with_arguments(event))
        .await
        .unwrap();
    assert_eq!(staged.is_error, Some(false), "{staged:?}");
    let proposal = staged.structured_content.unwrap()["proposalId"]
        .as_str()
        .unwrap()
        .to_owned();
    alices.cancel().await.unwrap();
    assert!(!calendar.exists(), "staging must not write");

    // Hers to see; Bob's list has nothing.
    for (token, sees) in [(&alice, true), (&bob, false)] {
        let token = hearth_server::Secret::parse(token).unwrap();
        let (client, _) = hearth_server::Client::connect(&served.url, &token)
            .await
            .unwrap();
        client.initialize("e2e").await.unwrap();
        let listed = client
            .call::<ProposalList>(&ProposalListParams::default())
            .await
            .unwrap();
        let found = listed.proposals.iter().any(|listed| listed.id == proposal);
        assert_eq!(found, sees, "{listed:?}");
    }
}
