//! `[context]`: where a project's context is prepared beyond the data directory.

use serde::Deserialize;

/// The environment variable naming the shared context cache; it wins over
/// [`ContextConfig::shared`].
pub const CONTEXT_SHARED_VARIABLE: &str = "HEARTH_CONTEXT_SHARED";

/// `[context]`: the context cache's settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextConfig {
    /// A store the nodes of a team server share their converted context in, so each
    /// source is converted once for all of them: `s3://bucket/prefix` (credentials,
    /// region and endpoint from the standard `AWS_*` environment variables) or
    /// `file:///absolute/folder` (a folder every node mounts). Each node keeps its own
    /// cache in its data directory, which agents read. `HEARTH_CONTEXT_SHARED` wins.
    pub shared: Option<String>,
}

impl ContextConfig {
    /// The shared context cache's location: `HEARTH_CONTEXT_SHARED` when set and not
    /// empty, else `shared`.
    pub fn shared_location(&self) -> Option<String> {
        std::env::var(CONTEXT_SHARED_VARIABLE)
            .ok()
            .filter(|location| !location.trim().is_empty())
            .or_else(|| self.shared.clone())
            .map(|location| location.trim().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use crate::Config;

    #[test]
    fn a_shared_context_cache_is_read_and_unknown_keys_refused() {
        let config = Config::parse(
            "[context]\nshared = \"s3://team-bucket/hearth/context\"\n",
            std::path::Path::new("config.toml"),
        )
        .unwrap();
        assert_eq!(
            config.context.shared.as_deref(),
            Some("s3://team-bucket/hearth/context")
        );
        assert_eq!(Config::default().context.shared, None);
        let unknown = Config::parse(
            "[context]\nshare = \"s3://x\"\n",
            std::path::Path::new("config.toml"),
        );
        assert!(unknown.is_err(), "an unknown key is refused");
    }
}
