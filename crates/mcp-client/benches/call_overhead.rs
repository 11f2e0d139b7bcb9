//! What Hearth adds to an MCP tool call over the server's own time: the same read-only
//! `echo` tool of a small Rust MCP server on stdio, called by a bare rmcp client and
//! through [`McpTools::call`] (name lookup, schema check, approval decision, the hop to
//! the MCP runtime, rendering), without and with the audit log (SQLite, in a temporary
//! directory). Target: at most 1 ms added. Run with
//! `cargo bench -p hearth-mcp-client --bench call_overhead`.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth_config::McpServerConfig;
use hearth_core::{ChatUri, HarnessId, Scope, SessionId, SessionUri, ToolCallContext, TurnId};
use hearth_fetch::FetchPolicy;
use hearth_mcp_client::McpTools;
use hearth_store::SqliteStore;
use hearth_tools::AuditLog;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServiceExt};
use serde_json::{Value, json};

const RUNS: usize = 2000;
const WARM_UP: usize = 50;

#[derive(Clone)]
struct Echo;

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("bench-echo", "1"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let Value::Object(schema) = json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        }) else {
            unreachable!()
        };
        let tool = Tool::new("echo", "Returns `text`.", Arc::new(schema))
            .with_annotations(ToolAnnotations::new().read_only(true));
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request
            .arguments
            .and_then(|arguments| {
                arguments
                    .get("text")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .unwrap_or_default();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

fn report(label: &str, mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{label:<44} median {:>7.1} µs   p90 {:>7.1} µs   p99 {:>7.1} µs",
        micros(at(0.5)),
        micros(at(0.9)),
        micros(at(0.99))
    );
    at(0.5)
}

fn context() -> ToolCallContext {
    let session = SessionUri::new(HarnessId::parse("bench").unwrap(), SessionId::generate());
    ToolCallContext {
        chat: ChatUri::default_for(&session),
        session,
        turn_id: TurnId::generate(),
        call_id: "call".to_owned(),
        scope: Scope::Global,
        working_directories: Vec::new(),
    }
}

fn config() -> BTreeMap<String, McpServerConfig> {
    let exe = std::env::current_exe().unwrap();
    BTreeMap::from([(
        "bench".to_owned(),
        McpServerConfig {
            command: Some(exe.display().to_string()),
            args: vec!["--serve-echo".to_owned()],
            ..McpServerConfig::default()
        },
    )])
}

async fn through_hearth(tools: &McpTools, audit: Option<&AuditLog>) -> Vec<Duration> {
    let call = context();
    let mut samples = Vec::with_capacity(RUNS);
    for run in 0..WARM_UP + RUNS {
        let started = Instant::now();
        let outcome = tools
            .call(&call, "bench__echo", json!({"text": "hello"}), audit)
            .await;
        let took = started.elapsed();
        assert!(
            !outcome.is_error && outcome.content == "hello",
            "{outcome:?}"
        );
        if run >= WARM_UP {
            samples.push(took);
        }
    }
    samples
}

async fn bench() {
    // The server's own time, as a bare rmcp client sees it.
    let exe = std::env::current_exe().unwrap();
    let mut command = tokio::process::Command::new(&exe);
    command.arg("--serve-echo");
    let client = ().serve(rmcp::transport::TokioChildProcess::new(command).unwrap()).await.unwrap();
    let mut bare = Vec::with_capacity(RUNS);
    for run in 0..WARM_UP + RUNS {
        let mut arguments = serde_json::Map::new();
        arguments.insert("text".into(), json!("hello"));
        let started = Instant::now();
        client
            .call_tool(CallToolRequestParams::new("echo").with_arguments(arguments))
            .await
            .unwrap();
        if run >= WARM_UP {
            bare.push(started.elapsed());
        }
    }
    client.cancel().await.unwrap();

    let tools = McpTools::from_config(&config(), FetchPolicy::default());
    let started = Instant::now();
    let listed = tools.reports().await;
    println!(
        "start and list the server: {:.1} ms ({} tool)",
        started.elapsed().as_secs_f64() * 1e3,
        listed[0].tools.len()
    );
    let plain = through_hearth(&tools, None).await;

    let directory = tempfile::tempdir().unwrap();
    let store = Arc::new(
        SqliteStore::open(&directory.path().join("hearth.db"))
            .await
            .unwrap(),
    );
    let audit = AuditLog::new(store);
    let audited = through_hearth(&tools, Some(&audit)).await;
    tools.shutdown().await;

    println!("{RUNS} calls of a read-only `echo` tool over stdio:");
    let bare = report("bare rmcp client (the server's own time)", bare);
    let plain = report("through Hearth, no audit log", plain);
    let audited = report("through Hearth, audited (SQLite)", audited);
    let added = |through: Duration| through.as_secs_f64() * 1e6 - bare.as_secs_f64() * 1e6;
    println!(
        "added by Hearth (median): {:.1} µs without the audit log, {:.1} µs with it (target ≤ 1000 µs)",
        added(plain),
        added(audited)
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    if std::env::args().any(|argument| argument == "--serve-echo") {
        runtime.block_on(async {
            let running = Echo.serve(rmcp::transport::io::stdio()).await.unwrap();
            running.waiting().await.unwrap();
        });
        return;
    }
    // `cargo test` runs benches once with `--bench` absent; only benchmark when asked.
    if !std::env::args().any(|argument| argument == "--bench") {
        return;
    }
    runtime.block_on(bench());
}
