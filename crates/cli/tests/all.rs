//! End-to-end tests: the real `hearth` binary on a temporary data directory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite {
    mod acp_agent;
    mod agent_home;
    mod agent_home_layout;
    mod agent_home_projects;
    mod agent_home_search;
    mod agent_home_tabs;
    mod agent_tools;
    mod agents;
    mod app_server;
    mod approval;
    mod audit_log;
    mod bad_input;
    mod browser_support;
    mod caldav;
    mod calendars;
    mod chat;
    mod crash_loop;
    mod exact_permissions;
    mod exfiltration;
    mod first_run;
    mod first_run_names;
    mod first_run_output;
    mod history;
    mod hostile_agent;
    mod hostile_documents;
    mod json_convention;
    mod limits;
    mod mcp_servers;
    mod mock;
    mod native;
    mod project_trust;
    mod projects;
    mod prompt_input;
    mod radicale_smoke;
    mod radicale_support;
    mod readme;
    mod rendered_output;
    mod run;
    mod run_durability;
    mod search;
    mod security;
    mod serve;
    mod serve_mcp;
    mod serve_support;
    mod sessions;
    mod short_ids;
    mod snapshots;
    mod support;
    mod terminal_chat;
    mod terminal_support;
    mod tool_support;
    mod url_credentials;
}
