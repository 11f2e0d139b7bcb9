//! Hearth's bring-your-own-key model clients.
//!
//! Owns: the provider-neutral request ([`ModelRequest`]) and event stream
//! ([`StreamEvent`]); the [`ModelClient`] seam with its two implementations,
//! OpenAI-compatible Chat Completions ([`OpenAiClient`]) and Anthropic Messages
//! ([`AnthropicClient`]), thin clients over reqwest with a push-based SSE parser and
//! lenient wire types; retries as the official SDKs do them ([`RetryPolicy`]);
//! connect, response and idle-stream timeouts; cancellation; provider errors with the
//! provider's own message, type, status and request id ([`LlmError`]); repair of tool
//! arguments and their validation against the tool's JSON Schema
//! ([`parse_tool_arguments`]); resolving providers from `config.toml`, the environment
//! and a local Ollama ([`discover_providers`]); checking them ([`check_provider`]); and
//! the advice shown when none exists ([`no_provider_help`]).
//!
//! Does not own: the agent loop, tools, or anything stored. API keys are read from the
//! environment or the configuration, held in memory only ([`ApiKey`] never prints), and
//! never written anywhere.

mod anthropic;
mod arguments;
mod client;
mod diagnostics;
mod doctor;
mod driver;
mod error;
mod event;
mod lenient;
mod openai;
mod providers;
mod repair;
mod request;
mod retry;
mod secret;
mod sse;
mod transport;
mod window;

pub use anthropic::{ANTHROPIC_VERSION, AnthropicClient};
pub use arguments::{ToolArguments, parse_tool_arguments};
pub use client::{ClientOptions, ModelClient, Protocol};
pub use doctor::{
    CheckMethod, CheckOutcome, ProviderCheck, check_provider, check_providers, fix_for,
    no_provider_help,
};
pub use driver::decode_recorded;
pub use error::{ApiError, LlmError, Result, TimeoutPhase, ToolArgumentsError};
pub use event::{
    CompletedToolCall, EventStream, FinishReason, ModelResponse, ResponseAssembler, StreamEvent,
    collect_response,
};
pub use hearth_schema::{SchemaViolation, validate as validate_schema};
pub use openai::OpenAiClient;
pub use providers::{
    BaseUrlSource, Discovery, DiscoveryOptions, Environment, KeyStatus, OLLAMA_DEFAULT_ADDRESS,
    ProviderSource, ResolvedProvider, discover_providers,
};
pub use repair::{Repaired, extract_json, repair_json};
pub use request::{Image, Message, ModelRequest, ToolCall, ToolSpec};
/// A resolver a client can be given ([`ClientOptions::resolver`]).
pub use reqwest::dns::Resolve as DnsResolve;
pub use retry::RetryPolicy;
pub use secret::ApiKey;
pub use sse::{SseEvent, SseParser};
pub use tokio_util::sync::CancellationToken;
pub use window::{
    ContextWindows, DEFAULT_CONTEXT_WINDOW, ListedModel, estimate_message_tokens,
    estimate_request_tokens, estimate_text_tokens,
};
