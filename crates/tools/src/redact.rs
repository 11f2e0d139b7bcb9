//! Keeping secrets out of the audit log: API keys, tokens and passwords in text and in
//! JSON are replaced with `[redacted]` before anything is stored.
//!
//! What counts as a secret: the value of any environment variable named like one
//! (`OPENAI_API_KEY`, `GITHUB_TOKEN`, …) wherever it appears; tokens with well-known
//! prefixes (`sk-`, `ghp_`, `xoxb-`, `AKIA`, …); the value after a secret-like name
//! (`api_key=…`, `"password": "…"`, `Authorization: Bearer …`); credentials in URLs
//! (`https://user:pass@host`); and, in JSON, every string under a secret-like key.

use std::sync::OnceLock;

use hearth_core::redact_userinfo;
use serde_json::Value;

/// What a secret is replaced with (the same word credentials in URLs get everywhere).
pub const REDACTED: &str = hearth_core::REDACTED;

/// Prefixes of well-known API tokens.
const TOKEN_PREFIXES: &[&str] = &[
    "sk-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxa-",
    "xoxb-",
    "xoxp-",
    "xoxs-",
    "AKIA",
    "ASIA",
    "AIza",
    "hf_",
    "npm_",
    "pypi-",
];

/// Characters a token prefix must be followed by at least this many of.
const MIN_TOKEN_TAIL: usize = 16;

/// Name endings (lower-case, letters and digits only) that mark a secret.
const SECRET_NAME_ENDINGS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "secretkey",
    "authorization",
    "auth",
    "credential",
    "credentials",
    "cookie",
    "signature",
    "sessionid",
];

/// Environment values shorter than this are not treated as secrets (too many false
/// matches).
const MIN_ENV_SECRET: usize = 8;

/// Whether a field, parameter or variable name marks a secret (`api_key`, `X-Api-Key`,
/// `OPENAI_API_KEY`, `password`, `access_token`, `key`).
pub fn is_secret_name(name: &str) -> bool {
    let normalized: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    normalized == "key"
        || SECRET_NAME_ENDINGS
            .iter()
            .any(|ending| normalized.ends_with(ending))
}

fn environment_secrets() -> &'static [String] {
    static SECRETS: OnceLock<Vec<String>> = OnceLock::new();
    SECRETS.get_or_init(|| {
        let mut secrets: Vec<String> = std::env::vars_os()
            .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
            .filter(|(name, value)| is_secret_name(name) && value.trim().len() >= MIN_ENV_SECRET)
            .map(|(_, value)| value.trim().to_owned())
            .collect();
        // Longest first, so a secret containing another is replaced whole.
        secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
        secrets.dedup();
        secrets
    })
}

/// `text` with secrets replaced by [`REDACTED`].
pub fn redact_text(text: &str) -> String {
    let mut text = text.to_owned();
    for secret in environment_secrets() {
        if text.contains(secret.as_str()) {
            text = text.replace(secret.as_str(), REDACTED);
        }
    }
    redact_patterns(&redact_userinfo(&text))
}

/// `value` with every string redacted and every secret-like key's value replaced.
pub fn redact_value(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(redact_text(text)),
        Value::Array(items) => Value::Array(items.iter().map(redact_value).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, item)| {
                    let item = match item {
                        Value::Null | Value::Bool(_) | Value::Number(_) => item.clone(),
                        _ if is_secret_name(key) => Value::String(REDACTED.to_owned()),
                        _ => redact_value(item),
                    };
                    (key.clone(), item)
                })
                .collect(),
        ),
        Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
    }
}

fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-'
}

fn ends_value(byte: u8) -> bool {
    byte.is_ascii_whitespace()
        || matches!(
            byte,
            b'"' | b'\'' | b'&' | b',' | b';' | b')' | b'}' | b']' | b'>' | b'<'
        )
}

fn is_auth_scheme(word: &str) -> bool {
    word.eq_ignore_ascii_case("bearer") || word.eq_ignore_ascii_case("basic")
}

fn has_token_prefix(word: &str) -> bool {
    TOKEN_PREFIXES
        .iter()
        .any(|prefix| word.starts_with(prefix) && word.len() >= prefix.len() + MIN_TOKEN_TAIL)
}

/// Prefixed tokens, `Bearer …`, and values after secret-like names.
fn redact_patterns(text: &str) -> String {
    let bytes = text.as_bytes();
    let len = bytes.len();
    let skip_spaces = |mut at: usize| {
        while at < len && (bytes[at] == b' ' || bytes[at] == b'\t') {
            at += 1;
        }
        at
    };
    let token_end = |mut at: usize| {
        while at < len && is_token_byte(bytes[at]) {
            at += 1;
        }
        at
    };
    let value_end = |mut at: usize| {
        while at < len && !ends_value(bytes[at]) {
            at += 1;
        }
        at
    };
    let mut out = String::with_capacity(len);
    let mut copied = 0;
    let mut at = 0;
    while at < len {
        if !is_token_byte(bytes[at]) || (at > 0 && is_token_byte(bytes[at - 1])) {
            at += 1;
            continue;
        }
        let end = token_end(at);
        let word = &text[at..end];
        // Where the secret value starts and ends, if this word introduces one.
        let mut secret = None;
        if has_token_prefix(word) {
            secret = Some((at, end));
        } else if is_auth_scheme(word) {
            let start = skip_spaces(end);
            if start > end {
                secret = Some((start, value_end(start)));
            }
        } else if is_secret_name(word) {
            let mut next = end;
            if next < len && (bytes[next] == b'"' || bytes[next] == b'\'') {
                next += 1;
            }
            next = skip_spaces(next);
            if next < len && (bytes[next] == b'=' || bytes[next] == b':') {
                next = skip_spaces(next + 1);
                if next < len && (bytes[next] == b'"' || bytes[next] == b'\'') {
                    next += 1;
                }
                let scheme_end = token_end(next);
                if is_auth_scheme(&text[next..scheme_end]) {
                    next = skip_spaces(scheme_end);
                }
                secret = Some((next, value_end(next)));
            }
        }
        match secret {
            Some((start, stop)) if stop > start => {
                out.push_str(&text[copied..start]);
                out.push_str(REDACTED);
                copied = stop;
                at = stop;
            }
            _ => at = end,
        }
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn secret_names() {
        for name in [
            "api_key",
            "X-Api-Key",
            "OPENAI_API_KEY",
            "password",
            "access_token",
            "key",
            "Authorization",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["max_tokens", "monkey", "title", "url", "keyboard"] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn redacts_secrets_in_text() {
        let cases = [
            (
                "GET https://example.com/a?api_key=abc123&page=2",
                "GET https://example.com/a?api_key=[redacted]&page=2",
            ),
            (
                "Authorization: Bearer eyJhbGciOi.J9.x",
                "Authorization: Bearer [redacted]",
            ),
            ("sent Bearer abcdef to it", "sent Bearer [redacted] to it"),
            (
                "key sk-proj-ABCDEFGHIJKLMNOPQRSTUV failed",
                "key [redacted] failed",
            ),
            (
                r#"{"password": "hunter22", "user": "ann"}"#,
                r#"{"password": "[redacted]", "user": "ann"}"#,
            ),
            (
                "https://ann:s3cret@example.com/x",
                "https://[redacted]@example.com/x",
            ),
            ("scikit sk-learn is fine", "scikit sk-learn is fine"),
            ("nothing to see", "nothing to see"),
        ];
        for (input, expected) in cases {
            assert_eq!(redact_text(input), expected, "{input}");
        }
    }

    #[test]
    fn redacts_secret_keys_and_strings_in_json() {
        let value = json!({
            "url": "https://example.com/?token=abc",
            "headers": {"X-Api-Key": "abc", "Accept": "text/html"},
            "max_tokens": 5,
            "nested": [{"client_secret": {"a": 1}}],
        });
        assert_eq!(
            redact_value(&value),
            json!({
                "url": "https://example.com/?token=[redacted]",
                "headers": {"X-Api-Key": "[redacted]", "Accept": "text/html"},
                "max_tokens": 5,
                "nested": [{"client_secret": "[redacted]"}],
            })
        );
    }
}
