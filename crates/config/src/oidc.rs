//! `[server.oidc]`: how a team server's users log in to Agent Home.

use serde::Deserialize;

/// `[server.oidc]`: the OpenID provider a team server's users log in with.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OidcConfig {
    /// The provider's issuer URL (its discovery document is under it).
    pub issuer: String,
    /// The client id Hearth is registered under at the provider.
    pub client_id: String,
    /// The client secret, if the provider gave one (`HEARTH_OIDC_CLIENT_SECRET` wins).
    pub client_secret: Option<String>,
}

impl std::fmt::Debug for OidcConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcConfig")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use crate::Config;

    #[test]
    fn a_team_servers_login_is_read_and_its_secret_never_shown() {
        let config = Config::parse(
            "[server]\nusers = true\n\n[server.oidc]\nissuer = \"https://login.example.test/realms/team\"\nclient_id = \"hearth\"\nclient_secret = \"s3cret\"\n",
            std::path::Path::new("config.toml"),
        )
        .unwrap();
        assert_eq!(config.server.users, Some(true));
        let oidc = config.server.oidc.expect("[server.oidc] is read");
        assert_eq!(oidc.issuer, "https://login.example.test/realms/team");
        assert_eq!(oidc.client_id, "hearth");
        assert_eq!(oidc.client_secret.as_deref(), Some("s3cret"));
        assert!(!format!("{oidc:?}").contains("s3cret"));
        let unknown = Config::parse(
            "[server.oidc]\nissuer = \"x\"\nclient_id = \"y\"\nscope = \"z\"\n",
            std::path::Path::new("config.toml"),
        );
        assert!(unknown.is_err(), "an unknown key is refused");
    }
}
