//! `/mcp` with a team server user's token: their MCP clients reach Hearth's tools as
//! them, in a session of theirs that works in their own folder; what the calls stage is
//! theirs to see, and nobody else's view shows it.

use hearth_server::Secret;
use hearth_store::UserStore;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use super::support::TestServer;
use super::users::{post, team, token_for};

async fn mcp_client(server: &TestServer, token: &Secret) -> RunningService<rmcp::RoleClient, ()> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", server.url))
            .auth_header(token.expose()),
    );
    ().serve(transport).await.unwrap()
}

/// A calendar change staged through the user's MCP client; its proposal id.
async fn stage(client: &RunningService<rmcp::RoleClient, ()>, title: &str) -> String {
    let arguments = json!({"title": title, "start": "2026-12-09T10:00"});
    let staged = client
        .call_tool(
            CallToolRequestParams::new("event_create")
                .with_arguments(arguments.as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(staged.is_error, Some(false), "{staged:?}");
    staged.structured_content.unwrap()["proposalId"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn proposal_ids(listed: &Value) -> Vec<String> {
    listed["result"]["proposals"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|proposal| proposal["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_mcp_client_works_as_them_in_a_session_of_theirs() {
    let team = team().await;
    let server = &team.server;
    let carol = server.host.sqlite().create_user("carol").await.unwrap();
    let carol_token = token_for(server, &carol.id).await;

    let bobs = mcp_client(server, &team.bob_token).await;
    let listed = bobs.list_all_tools().await.unwrap();
    assert!(
        listed.iter().any(|tool| tool.name == "event_create"),
        "{listed:?}"
    );
    let his = stage(&bobs, "bob's review").await;

    // The call is his: in his MCP session, owned by him, in his own folder.
    let sessions = post(server, &team.bob_token, "session/list", json!({})).await;
    let mine: Vec<&Value> = sessions["result"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|session| session["harness"] == "mcp")
        .collect();
    assert_eq!(mine.len(), 1, "{sessions}");
    let bob_id = mine[0]["owner"].as_str().unwrap().to_owned();
    assert_ne!(bob_id, team.alice_id);
    let folder = mine[0]["workingDirectories"][0].as_str().unwrap();
    assert!(folder.ends_with(&format!("users/{bob_id}")), "{folder}");
    assert!(std::path::Path::new(folder).is_dir());
    // A second client of his works in the same session.
    let again = mcp_client(server, &team.bob_token).await;
    let second = stage(&again, "bob's second").await;
    let sessions = post(server, &team.bob_token, "session/list", json!({})).await;
    assert_eq!(
        sessions.to_string().matches("\"harness\":\"mcp\"").count(),
        1
    );

    // Bob sees his proposals and not Alice's; Alice and Carol never see his.
    let listed = proposal_ids(&post(server, &team.bob_token, "proposal/list", json!({})).await);
    assert!(
        listed.contains(&his) && listed.contains(&second),
        "{listed:?}"
    );
    assert!(!listed.contains(&team.proposal), "{listed:?}");
    for token in [&team.alice_token, &carol_token] {
        let listed = proposal_ids(&post(server, token, "proposal/list", json!({})).await);
        assert!(!listed.contains(&his), "{listed:?}");
        let refused = post(server, token, "proposal/reject", json!({"proposalId": his})).await;
        assert_eq!(refused["error"]["data"]["kind"], "notFound", "{refused}");
    }
    // Carol's client gets a session of her own.
    let carols = mcp_client(server, &carol_token).await;
    let hers = stage(&carols, "carol's").await;
    let listed = proposal_ids(&post(server, &carol_token, "proposal/list", json!({})).await);
    assert_eq!(listed, std::slice::from_ref(&hers));
    // The operator's clients keep the endpoint as it was, and see everything.
    let operators = mcp_client(server, &server.token).await;
    let theirs = stage(&operators, "the operator's").await;
    let all = proposal_ids(&post(server, &server.token, "proposal/list", json!({})).await);
    for id in [&his, &second, &hers, &theirs, &team.proposal] {
        assert!(all.contains(id), "{id} missing from {all:?}");
    }
    for client in [bobs, again, carols, operators] {
        client.cancel().await.unwrap();
    }
}
