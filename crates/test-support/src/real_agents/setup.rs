//! The isolated home of each real agent: the files written under it and the
//! environment that points the agent at the mock model server with everything that
//! would reach the network switched off.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The API key every agent is given; the mock model server accepts any.
pub(super) const API_KEY: &str = "hearth-mock-key";

/// The model names the agents are configured with.
pub(super) const CLAUDE_MODEL: &str = "claude-sonnet-4-5";
pub(super) const CLAUDE_SMALL_MODEL: &str = "claude-haiku-4-5";
pub(super) const CODEX_MODEL: &str = "hearth-mock";
pub(super) const GEMINI_MODEL: &str = "gemini-2.5-flash";
pub(super) const OPENCODE_MODEL: &str = "hearth-mock";
pub(super) const COPILOT_MODEL: &str = "hearth-mock";

/// Version of `@opencode-ai/plugin` that OpenCode would install into its config folder.
const OPENCODE_PLUGIN_VERSION: &str = "1.18.33";

type Env = Vec<(String, String)>;

fn var(name: &str, value: impl Into<String>) -> (String, String) {
    (name.to_owned(), value.into())
}

fn path_string(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Writes `contents` at `path`, creating the folders above it.
fn write(path: &Path, contents: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|error| panic!("cannot create {}: {error}", parent.display()));
    }
    std::fs::write(path, contents)
        .unwrap_or_else(|error| panic!("cannot write {}: {error}", path.display()));
}

fn write_json(path: &Path, value: &Value) {
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    write(path, &text);
}

fn create_dir(path: &Path) {
    std::fs::create_dir_all(path)
        .unwrap_or_else(|error| panic!("cannot create {}: {error}", path.display()));
}

/// A program on `PATH` as an absolute path (the agent starts with a cleared
/// environment), or the bare name when it is not found.
pub(super) fn find_program(name: &str) -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}

/// What every agent gets: HOME and the XDG folders under `home`, the caller's `PATH`
/// (to find `node`, and the shell its tools run), a shell, a UTF-8 locale.
pub(super) fn base_env(home: &Path) -> Env {
    let folders = [
        ("XDG_CONFIG_HOME", home.join(".config")),
        ("XDG_DATA_HOME", home.join(".local/share")),
        ("XDG_CACHE_HOME", home.join(".cache")),
        ("XDG_STATE_HOME", home.join(".local/state")),
    ];
    let mut env = vec![var("HOME", path_string(home))];
    for (name, folder) in folders {
        create_dir(&folder);
        env.push(var(name, path_string(&folder)));
    }
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
    let shell = if Path::new("/bin/bash").is_file() {
        "/bin/bash"
    } else {
        "/bin/sh"
    };
    env.extend([
        var("PATH", path),
        var("SHELL", shell),
        var("LANG", "C.UTF-8"),
        var("NO_COLOR", "1"),
    ]);
    env
}

/// Both Claude adapters (they run the same Claude Code underneath).
///
/// - `CLAUDE_CONFIG_DIR/settings.json`: permission mode `default` (edits ask).
/// - `CLAUDE_CONFIG_DIR/plugins/blocklist.json`: a plugin blocklist fetched "in the
///   future", which Claude Code takes as fresh and so does not download from GitHub
///   (no setting turns that download off).
/// - `IS_SANDBOX=1`: as root, both adapters otherwise fail `session/new`.
pub(super) fn claude(home: &Path, model_url: &str) -> Env {
    let config = home.join(".claude");
    write_json(
        &config.join("settings.json"),
        &json!({"permissions": {"defaultMode": "default"}}),
    );
    write_json(
        &config.join("plugins/blocklist.json"),
        &json!({"fetchedAt": "2999-01-01T00:00:00.000Z", "plugins": []}),
    );
    vec![
        var("ANTHROPIC_BASE_URL", model_url),
        var("ANTHROPIC_API_KEY", API_KEY),
        var("ANTHROPIC_MODEL", CLAUDE_MODEL),
        var("ANTHROPIC_SMALL_FAST_MODEL", CLAUDE_SMALL_MODEL),
        var("CLAUDE_CONFIG_DIR", path_string(&config)),
        var("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        var("CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL", "1"),
        // Else the older Claude Code asks api.anthropic.com whether "fast mode" is on.
        var("CLAUDE_CODE_DISABLE_FAST_MODE", "1"),
        var("DISABLE_TELEMETRY", "1"),
        var("DISABLE_ERROR_REPORTING", "1"),
        var("DISABLE_AUTOUPDATER", "1"),
        var("IS_SANDBOX", "1"),
    ]
}

/// A TOML basic string (JSON string escapes are valid TOML).
fn toml_string(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// Codex: `CODEX_HOME/config.toml` with a provider on the mock server (Responses wire,
/// no retries), edits asking for approval (`approval_policy = "on-request"` in a
/// read-only sandbox), plugins, analytics, web search and update checks off; and a
/// model catalog describing the mock model, without which Codex streams a "model
/// metadata not found" warning as agent text.
pub(super) fn codex(home: &Path, model_url: &str, workdir: &Path) -> Env {
    let codex_home = home.join(".codex");
    let catalog = codex_home.join("hearth-models.json");
    write_json(&catalog, &codex_catalog());
    let config = format!(
        r#"model = {model}
model_provider = "hearth"
model_catalog_json = {catalog}
approval_policy = "on-request"
sandbox_mode = "read-only"
check_for_update_on_startup = false
web_search = "disabled"

[model_providers.hearth]
name = "Hearth mock model server"
base_url = {base_url}
env_key = "HEARTH_MODEL_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false

[analytics]
enabled = false

[projects.{workdir}]
trust_level = "trusted"
"#,
        model = toml_string(CODEX_MODEL),
        catalog = toml_string(&path_string(&catalog)),
        base_url = toml_string(&format!("{model_url}/v1")),
        workdir = toml_string(&path_string(workdir)),
    );
    write(&codex_home.join("config.toml"), &config);
    vec![
        var("CODEX_HOME", path_string(&codex_home)),
        var("HEARTH_MODEL_API_KEY", API_KEY),
    ]
}

/// One catalog entry for the mock model, in the shape of Codex's bundled catalog:
/// freeform `apply_patch` (the only kind this Codex accepts), no websockets, no search
/// tool, no reasoning summaries.
fn codex_catalog() -> Value {
    json!({"models": [{
        "slug": CODEX_MODEL,
        "display_name": "Hearth mock",
        "description": "The model of Hearth's mock model server.",
        "default_reasoning_level": "medium",
        "supported_reasoning_levels": [
            {"effort": "medium", "description": "The only level the mock model has"},
        ],
        "shell_type": "shell_command",
        "visibility": "list",
        "minimal_client_version": "0.98.0",
        "supported_in_api": true,
        "availability_nux": null,
        "upgrade": null,
        "priority": 1,
        "base_instructions": "You are a coding agent working for a Hearth test.",
        "model_messages": null,
        "prefer_websockets": false,
        "support_verbosity": false,
        "default_verbosity": null,
        "apply_patch_tool_type": "freeform",
        "web_search_tool_type": "text",
        "input_modalities": ["text"],
        "supports_image_detail_original": false,
        "truncation_policy": {"mode": "tokens", "limit": 10000},
        "supports_parallel_tool_calls": false,
        "context_window": 128000,
        "max_context_window": 128000,
        "auto_compact_token_limit": null,
        "reasoning_summary_format": "none",
        "default_reasoning_summary": "none",
        "supports_reasoning_summaries": false,
        "experimental_supported_tools": [],
        "available_in_plans": [],
        "supports_search_tool": false,
        "service_tiers": [],
        "additional_speed_tiers": [],
    }]})
}

/// Gemini CLI: `~/.gemini/settings.json` selecting API-key auth and the model, with
/// auto-update, usage statistics, telemetry and the IDE link off. The workspace is
/// trusted through the environment (headless runs refuse an untrusted folder), and the
/// CLI does not relaunch itself in a second Node process.
///
/// Session retention is off: reopening a session (`session/load`) leaves an empty
/// record with the session's short id, and the retention clean-up at the CLI's next
/// start deletes every record with that short id — the reopened conversation with it
/// (Gemini CLI 0.61.0).
pub(super) fn gemini(home: &Path, model_url: &str) -> Env {
    write_json(
        &home.join(".gemini/settings.json"),
        &json!({
            "general": {
                "enableAutoUpdate": false,
                "enableAutoUpdateNotification": false,
                "sessionRetention": {"enabled": false},
            },
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "model": {"name": GEMINI_MODEL},
            "ide": {"enabled": false},
        }),
    );
    vec![
        var("GEMINI_API_KEY", API_KEY),
        var("GOOGLE_GEMINI_BASE_URL", model_url),
        var("GEMINI_CLI_TRUST_WORKSPACE", "true"),
        var("GEMINI_CLI_NO_RELAUNCH", "true"),
    ]
}

/// OpenCode: its global `opencode.json` (under `XDG_CONFIG_HOME`) with one provider,
/// `@ai-sdk/openai-compatible` on the mock server, as the only provider and model;
/// edits ask (`OPENCODE_PERMISSION`); every download switch off. OpenCode also installs
/// `@opencode-ai/plugin` from npm into its config folder in the background unless that
/// folder's `package-lock.json` already lists it: it is written here so that it does
/// not.
pub(super) fn opencode(home: &Path, model_url: &str) -> Env {
    let config = home.join(".config/opencode");
    write_json(
        &config.join("opencode.json"),
        &json!({
            "$schema": "https://opencode.ai/config.json",
            "model": format!("hearth/{OPENCODE_MODEL}"),
            "small_model": format!("hearth/{OPENCODE_MODEL}"),
            "autoupdate": false,
            "share": "disabled",
            "enabled_providers": ["hearth"],
            "provider": {"hearth": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Hearth mock model server",
                "options": {"baseURL": format!("{model_url}/v1"), "apiKey": API_KEY},
                "models": {OPENCODE_MODEL: {
                    "name": "Hearth mock",
                    "tool_call": true,
                    "limit": {"context": 128000, "output": 4096},
                }},
            }},
        }),
    );
    let dependencies = json!({"@opencode-ai/plugin": OPENCODE_PLUGIN_VERSION});
    write_json(
        &config.join("package.json"),
        &json!({"dependencies": dependencies}),
    );
    write_json(
        &config.join("package-lock.json"),
        &json!({
            "name": "opencode",
            "lockfileVersion": 3,
            "requires": true,
            "packages": {"": {"dependencies": dependencies}},
        }),
    );
    create_dir(&config.join("node_modules"));
    vec![
        var("OPENCODE_PERMISSION", json!({"edit": "ask"}).to_string()),
        var("OPENCODE_DISABLE_AUTOUPDATE", "1"),
        var("OPENCODE_DISABLE_MODELS_FETCH", "1"),
        var("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
        var("OPENCODE_DISABLE_SHARE", "1"),
        var("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1"),
        var("OPENCODE_DISABLE_CLAUDE_CODE", "1"),
        var("OPENCODE_DISABLE_EXTERNAL_SKILLS", "1"),
        var("OPENCODE_DISABLE_PROJECT_CONFIG", "1"),
        var("OPENCODE_PURE", "1"),
    ]
}

/// GitHub Copilot CLI: a "bring your own key" provider (`COPILOT_PROVIDER_*`, OpenAI
/// Chat Completions) on the mock server, which needs no GitHub sign-in; offline mode
/// (no GitHub features, telemetry or update checks) and no auto-update. The mock model
/// is not in Copilot's catalog: its prompt and output limits are given so that Copilot
/// does not guess them.
///
/// `COPILOT_HOME` (its settings, session state and logs) is under `home`, but its
/// package cache is `package_dir/pkg-cache`, beside its install and kept between runs:
/// on its first start the binary unpacks about 235 MB there, which later starts reuse.
pub(super) fn copilot(home: &Path, model_url: &str, package_dir: &Path) -> Env {
    let copilot_home = home.join(".copilot");
    create_dir(&copilot_home);
    vec![
        var("COPILOT_HOME", path_string(&copilot_home)),
        var(
            "COPILOT_PKG_CACHE_HOME",
            path_string(&package_dir.join("pkg-cache")),
        ),
        var("COPILOT_PROVIDER_BASE_URL", format!("{model_url}/v1")),
        var("COPILOT_PROVIDER_TYPE", "openai"),
        var("COPILOT_PROVIDER_API_KEY", API_KEY),
        var("COPILOT_PROVIDER_MAX_PROMPT_TOKENS", "128000"),
        var("COPILOT_PROVIDER_MAX_OUTPUT_TOKENS", "4096"),
        var("COPILOT_MODEL", COPILOT_MODEL),
        var("COPILOT_OFFLINE", "true"),
        var("COPILOT_AUTO_UPDATE", "false"),
    ]
}
