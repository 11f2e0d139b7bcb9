//! API keys, kept out of every `Debug`, `Display` and log line.

use std::fmt;

/// An API key. Its `Debug` output is `ApiKey(<redacted>)`; it has no `Display` and is
/// not serializable, so it cannot reach logs, the database or the audit log by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key; an empty or blank string is no key.
    pub fn new(key: impl Into<String>) -> Option<Self> {
        let key = key.into().trim().to_owned();
        (!key.is_empty()).then_some(Self(key))
    }

    /// The key itself, for the request header only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `<redacted>`.
    pub(crate) fn redact(&self, text: &str) -> String {
        if self.0.len() >= 4 && text.contains(&self.0) {
            text.replace(&self.0, "<redacted>")
        } else {
            text.to_owned()
        }
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_redaction_hide_the_key() {
        let key = ApiKey::new("sk-secret-123").unwrap();
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        assert_eq!(
            key.redact("Incorrect API key provided: sk-secret-123."),
            "Incorrect API key provided: <redacted>."
        );
        assert!(ApiKey::new("  ").is_none());
    }
}
