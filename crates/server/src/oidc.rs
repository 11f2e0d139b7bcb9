//! OpenID Connect login for the web (team servers): the authorization code flow with PKCE
//! and a nonce, against a provider found by discovery.
//!
//! 1. `GET /auth/oidc` seals the pending login (state, nonce, PKCE verifier, the
//!    redirect URI, when it started) under the login key into a short-lived cookie the
//!    browser brings back, and sends the browser to the provider. The server keeps
//!    nothing of it: the callback may reach any node of a team that shares the token and
//!    `login.key` (behind a load balancer, without sticky sessions). The provider is discovered on the first login and
//!    the answer cached; an unreachable provider fails that login with a clear page and is
//!    asked again on the next one, so it never stops the server (or the token API).
//! 2. `GET /auth/oidc/callback?code&state` opens the cookie: the login must be this
//!    browser's (the state in its cookie is the one the provider sent back: no one can
//!    finish a login they started in another browser, login CSRF) and younger than
//!    [`PENDING_LOGIN_LIFETIME`]; a node takes a state once (the provider takes its code
//!    once). It trades the code (with the PKCE verifier), and verifies the ID
//!    token (signature, issuer, audience, expiry, nonce, and the access token's hash).
//! 3. The verified identity goes to the [`IdentityResolver`], which names the Hearth user
//!    or refuses with a message the browser shows. The route then hands the browser a
//!    login code bound to that user, the same way a login link does (see `http`).
//!
//! The cookie is not a credential (it only matters together with the provider's answer,
//! and logs no one in), so the rule that a browser session is never a cookie holds.
//! Codes, states and tokens never reach the logs.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use futures::future::BoxFuture;
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreIdToken, CoreIdTokenClaims, CoreProviderMetadata,
};
use openidconnect::{
    AccessToken, AccessTokenHash, AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl,
    Nonce, OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope,
    TokenResponse,
};

use crate::error::{Result, ServerError};
use crate::login::{Logins, unix_now};

mod failure;
mod provider_http;

pub(crate) use failure::LoginFailure;
use provider_http::ProviderHttp;

/// A client of the provider, made from its discovery answer.
type ProviderClient = CoreClient<
    openidconnect::EndpointSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointNotSet,
    openidconnect::EndpointMaybeSet,
    openidconnect::EndpointMaybeSet,
>;

/// How long a login may take at the provider before its state stops working.
pub const PENDING_LOGIN_LIFETIME: Duration = Duration::from_secs(10 * 60);

/// What the pending login's seal is computed for.
const PENDING_PURPOSE: &str = "oidc-pending";

/// How long the provider's discovery answer (endpoints and signing keys) is used.
const DISCOVERY_LIFETIME: Duration = Duration::from_secs(60 * 60);

/// An ID token that fails its checks makes the next login ask the provider again (its keys
/// may have changed), unless the answer is younger than this.
const MIN_DISCOVERY_AGE: Duration = Duration::from_secs(60);

/// How long a request to the provider may take.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(15);

/// A person the OpenID provider vouched for: the ID token's claims that name them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OidcIdentity {
    /// The provider (the ID token's `iss`).
    pub issuer: String,
    /// Who they are at the provider (`sub`): unique and stable per issuer.
    pub subject: String,
    /// Their name (`name`), when the provider gave one.
    pub name: Option<String>,
    /// Their e-mail address (`email`), when the provider gave one and did not say it is
    /// unverified (`email_verified: false`).
    pub email: Option<String>,
}

/// Maps a verified identity to a Hearth user id (`Ok`, 1 to 64 of `A-Z a-z 0-9 _ -`), or
/// refuses the login with a message shown to the person (`Err`).
pub type IdentityResolver = Arc<
    dyn Fn(OidcIdentity) -> BoxFuture<'static, std::result::Result<String, String>> + Send + Sync,
>;

/// OpenID Connect login settings: which provider, this server's registration there, and
/// who a verified identity is in Hearth.
#[derive(Clone)]
pub struct OidcOptions {
    /// The provider's issuer URL (discovery reads `<issuer>/.well-known/openid-configuration`).
    pub issuer_url: String,
    /// This server's client id at the provider.
    pub client_id: String,
    /// This server's client secret at the provider (sent with HTTP Basic), if it has one.
    pub client_secret: Option<String>,
    /// Who a verified identity is in Hearth.
    pub resolver: IdentityResolver,
}

impl fmt::Debug for OidcOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcOptions")
            .field("issuer_url", &self.issuer_url)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .finish_non_exhaustive()
    }
}

/// A login started and not finished yet, as its cookie carries it.
#[derive(serde::Serialize, serde::Deserialize)]
struct PendingLogin {
    state: String,
    nonce: String,
    verifier: String,
    redirect: String,
    /// When it started (seconds since the Unix epoch).
    started: u64,
}

/// The provider's discovery answer, and when it was read.
struct Discovered {
    metadata: CoreProviderMetadata,
    read_at: Instant,
}

/// A login sent to the provider.
pub(crate) struct Started {
    /// Where the browser goes next.
    pub authorize_url: String,
    /// The value of the cookie the browser must bring back: the pending login, sealed.
    pub binding: String,
}

/// What the provider sent the browser back with.
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct Callback {
    pub code: Option<String>,
    pub state: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
    /// The provider that answered (RFC 9207), when it says.
    pub iss: Option<String>,
}

/// OpenID Connect logins of one server.
pub(crate) struct Oidc {
    options: OidcOptions,
    issuer: IssuerUrl,
    http: ProviderHttp,
    discovered: tokio::sync::Mutex<Option<Discovered>>,
    /// States this node took, with when they stop working.
    used: Mutex<HashMap<String, u64>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Oidc {
    /// Logins with `options` (checked here; the provider is not asked until the first
    /// login).
    pub fn new(options: OidcOptions) -> Result<Self> {
        let issuer = IssuerUrl::new(options.issuer_url.trim().to_owned()).map_err(|error| {
            ServerError::Oidc(format!(
                "the issuer URL `{}` is not a URL ({error})",
                options.issuer_url
            ))
        })?;
        if options.client_id.trim().is_empty() {
            return Err(ServerError::Oidc("the client id is empty".to_owned()));
        }
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(PROVIDER_TIMEOUT)
            .build()
            .map_err(|error| ServerError::Oidc(format!("cannot make an HTTP client: {error}")))?;
        Ok(Self {
            options,
            issuer,
            http: ProviderHttp(client),
            discovered: tokio::sync::Mutex::new(None),
            used: Mutex::new(HashMap::new()),
        })
    }

    /// Starts a login whose callback is `<origin>/auth/oidc/callback`, sealing it under
    /// `logins`' key.
    pub async fn start(
        &self,
        origin: &str,
        logins: &Logins,
    ) -> std::result::Result<Started, LoginFailure> {
        let redirect = RedirectUrl::new(format!("{origin}{}", crate::guard::OIDC_CALLBACK_PATH))
            .map_err(|error| LoginFailure::Internal(format!("bad redirect URI: {error}")))?;
        let client = self.client(redirect.clone()).await?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state, nonce) = client
            .authorize_url(
                CoreAuthenticationFlow::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scope(Scope::new("profile".to_owned()))
            .add_scope(Scope::new("email".to_owned()))
            .set_pkce_challenge(challenge)
            .url();
        let login = PendingLogin {
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            verifier: verifier.secret().clone(),
            redirect: redirect.to_string(),
            started: unix_now(),
        };
        Ok(Started {
            authorize_url: url.to_string(),
            binding: seal_pending(&login, logins)?,
        })
    }

    /// The pending login the browser's cookie carries, when it is this callback's, young
    /// enough, and not taken here before.
    fn take_pending(
        &self,
        callback: &Callback,
        binding: Option<&str>,
        logins: &Logins,
    ) -> std::result::Result<PendingLogin, LoginFailure> {
        let login = binding
            .and_then(|binding| logins.open_value(PENDING_PURPOSE, binding))
            .and_then(|body| URL_SAFE_NO_PAD.decode(body).ok())
            .and_then(|bytes| serde_json::from_slice::<PendingLogin>(&bytes).ok())
            .ok_or(LoginFailure::OtherBrowser)?;
        let now = unix_now();
        let ends = login
            .started
            .saturating_add(PENDING_LOGIN_LIFETIME.as_secs());
        let same_state = callback.state.as_deref().is_some_and(|state| {
            crate::token::Secret::from_trusted(login.state.clone()).matches(state)
        });
        if !same_state {
            // This browser's login, but not the state the provider sent back.
            return Err(LoginFailure::UnknownState);
        }
        let mut used = lock(&self.used);
        used.retain(|_, until| now < *until);
        if now >= ends || used.insert(login.state.clone(), ends).is_some() {
            return Err(LoginFailure::UnknownState);
        }
        Ok(login)
    }

    /// Finishes a login: the Hearth user the provider's answer logs in.
    pub async fn finish(
        &self,
        callback: Callback,
        binding: Option<&str>,
        logins: &Logins,
    ) -> std::result::Result<String, LoginFailure> {
        // The state works once here, whatever happens next.
        let login = self.take_pending(&callback, binding, logins)?;
        if let Some(answered) = callback.iss
            && answered != self.issuer.as_str()
        {
            return Err(LoginFailure::OtherIssuer {
                answered,
                expected: self.issuer.to_string(),
            });
        }
        if let Some(error) = callback.error {
            return Err(LoginFailure::ProviderRefused {
                error,
                description: callback.error_description,
            });
        }
        let code = callback.code.ok_or(LoginFailure::NoCode)?;
        let identity = self.verify(login, code).await?;
        let user = (self.options.resolver)(identity)
            .await
            .map_err(LoginFailure::Refused)?;
        if !crate::login::is_user_id(&user) {
            return Err(LoginFailure::Internal(format!(
                "the user directory named `{}`, which is not a user id",
                user.chars().take(80).collect::<String>()
            )));
        }
        Ok(user)
    }

    /// Trades the code and verifies the ID token; the identity it proves.
    async fn verify(
        &self,
        login: PendingLogin,
        code: String,
    ) -> std::result::Result<OidcIdentity, LoginFailure> {
        let redirect = RedirectUrl::new(login.redirect)
            .map_err(|error| LoginFailure::Internal(format!("bad redirect URI: {error}")))?;
        let client = self.client(redirect).await?;
        let response = client
            .exchange_code(AuthorizationCode::new(code))
            .map_err(|error| LoginFailure::Provider(error.to_string()))?
            .set_pkce_verifier(PkceCodeVerifier::new(login.verifier))
            .request_async(&self.http)
            .await
            .map_err(failure::exchange_failure)?;
        let id_token = response
            .id_token()
            .ok_or_else(|| LoginFailure::Provider("its answer holds no ID token".to_owned()))?;
        let nonce = Nonce::new(login.nonce);
        let checked = check_id_token(&client, id_token, &nonce, response.access_token());
        match checked {
            Ok(claims) => Ok(identity(claims)),
            Err(failure) => {
                self.forget_stale_discovery().await;
                Err(failure)
            }
        }
    }

    /// A client for the provider that sends the browser back to `redirect`.
    async fn client(
        &self,
        redirect: RedirectUrl,
    ) -> std::result::Result<ProviderClient, LoginFailure> {
        let metadata = self.metadata().await?;
        Ok(CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(self.options.client_id.clone()),
            self.options.client_secret.clone().map(ClientSecret::new),
        )
        .set_redirect_uri(redirect))
    }

    /// The provider's discovery answer: cached, or asked for now.
    async fn metadata(&self) -> std::result::Result<CoreProviderMetadata, LoginFailure> {
        let mut discovered = self.discovered.lock().await;
        if let Some(known) = discovered.as_ref()
            && known.read_at.elapsed() < DISCOVERY_LIFETIME
        {
            return Ok(known.metadata.clone());
        }
        let metadata = CoreProviderMetadata::discover_async(self.issuer.clone(), &self.http)
            .await
            .map_err(|error| LoginFailure::Unreachable {
                issuer: self.issuer.to_string(),
                error: failure::error_chain(&error),
            })?;
        tracing::info!(issuer = %self.issuer.as_str(), "found the OpenID provider");
        *discovered = Some(Discovered {
            metadata: metadata.clone(),
            read_at: Instant::now(),
        });
        Ok(metadata)
    }

    /// After an ID token failed its checks: the next login asks the provider again (its
    /// keys may have changed), unless its answer is very recent.
    async fn forget_stale_discovery(&self) {
        let mut discovered = self.discovered.lock().await;
        if discovered
            .as_ref()
            .is_some_and(|known| known.read_at.elapsed() >= MIN_DISCOVERY_AGE)
        {
            *discovered = None;
        }
    }
}

/// The ID token's claims, once its signature, issuer, audience, expiry and nonce check
/// out, and the access token it came with is the one it was issued with (`at_hash`).
/// The pending login sealed under `logins`' key, as its cookie's value.
fn seal_pending(
    login: &PendingLogin,
    logins: &Logins,
) -> std::result::Result<String, LoginFailure> {
    let json =
        serde_json::to_vec(login).map_err(|error| LoginFailure::Internal(error.to_string()))?;
    Ok(logins.seal_value(PENDING_PURPOSE, &URL_SAFE_NO_PAD.encode(json)))
}

fn check_id_token<'token>(
    client: &ProviderClient,
    id_token: &'token CoreIdToken,
    nonce: &Nonce,
    access_token: &AccessToken,
) -> std::result::Result<&'token CoreIdTokenClaims, LoginFailure> {
    let unverified = |error: &dyn std::fmt::Display| LoginFailure::Unverified(error.to_string());
    let verifier = client.id_token_verifier();
    let claims = id_token
        .claims(&verifier, nonce)
        .map_err(|error| unverified(&error))?;
    let Some(expected) = claims.access_token_hash() else {
        return Ok(claims);
    };
    let alg = id_token.signing_alg().map_err(|error| unverified(&error))?;
    let key = id_token
        .signing_key(&verifier)
        .map_err(|error| unverified(&error))?;
    let actual =
        AccessTokenHash::from_token(access_token, alg, key).map_err(|error| unverified(&error))?;
    if actual == *expected {
        Ok(claims)
    } else {
        Err(LoginFailure::Unverified(
            "the access token does not match the ID token".to_owned(),
        ))
    }
}

/// The identity a verified ID token names.
fn identity(claims: &CoreIdTokenClaims) -> OidcIdentity {
    let email = claims
        .email()
        .filter(|_| claims.email_verified() != Some(false))
        .map(|email| email.as_str().to_owned());
    OidcIdentity {
        issuer: claims.issuer().as_str().to_owned(),
        subject: claims.subject().as_str().to_owned(),
        name: claims
            .name()
            .and_then(|name| name.get(None))
            .map(|name| name.as_str().to_owned()),
        email,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(issuer_url: &str) -> OidcOptions {
        OidcOptions {
            issuer_url: issuer_url.to_owned(),
            client_id: "hearth".to_owned(),
            client_secret: Some("very secret".to_owned()),
            resolver: Arc::new(|identity| Box::pin(async move { Ok(identity.subject) })),
        }
    }

    #[test]
    fn debug_hides_the_client_secret() {
        let text = format!("{:?}", options("http://127.0.0.1:1"));
        assert!(!text.contains("very secret"), "{text}");
        assert!(text.contains("<redacted>"), "{text}");
        assert!(text.contains("http://127.0.0.1:1"), "{text}");
    }

    #[test]
    fn bad_settings_are_refused_at_start() {
        let error = Oidc::new(options("not a url")).err().unwrap();
        assert!(error.to_string().contains("not a URL"), "{error}");
        let mut empty = options("http://127.0.0.1:1");
        empty.client_id = " ".to_owned();
        let error = Oidc::new(empty).err().unwrap();
        assert!(error.to_string().contains("client id"), "{error}");
        assert!(Oidc::new(options("http://127.0.0.1:1")).is_ok());
    }

    /// Logins under a fresh token and a key file in `dir`.
    fn logins_in(token: &crate::token::Secret, dir: &std::path::Path) -> Logins {
        Logins::open(
            token.clone(),
            Some(dir.join(crate::login::LOGIN_KEY_FILE)),
            Duration::from_secs(60),
        )
        .unwrap()
    }

    fn cookie(state: &str, started: u64, logins: &Logins) -> String {
        let login = PendingLogin {
            state: state.to_owned(),
            nonce: "n".to_owned(),
            verifier: "v".repeat(43),
            redirect: "http://127.0.0.1:2/auth/oidc/callback".to_owned(),
            started,
        };
        seal_pending(&login, logins).unwrap()
    }

    fn refused(state: &str, iss: Option<&str>) -> Callback {
        Callback {
            state: Some(state.to_owned()),
            error: Some("access_denied".to_owned()),
            iss: iss.map(str::to_owned),
            ..Callback::default()
        }
    }

    #[tokio::test]
    async fn a_login_finishes_in_its_browser_on_any_node_once_per_node() {
        let dir = tempfile::tempdir().unwrap();
        let token = crate::token::Secret::generate().unwrap();
        let logins = logins_in(&token, dir.path());
        let oidc = Oidc::new(options("http://127.0.0.1:1")).unwrap();
        let now = unix_now();
        let known = cookie("known", now, &logins);
        let forged = oidc
            .finish(refused("other", None), Some(&known), &logins)
            .await;
        assert!(
            matches!(forged, Err(LoginFailure::UnknownState)),
            "{forged:?}"
        );
        for binding in [None, Some("known.00")] {
            let other = oidc.finish(refused("known", None), binding, &logins).await;
            assert!(
                matches!(other, Err(LoginFailure::OtherBrowser)),
                "{other:?}"
            );
        }
        let tampered = known.replacen('e', "f", 1);
        let other = oidc
            .finish(refused("known", None), Some(&tampered), &logins)
            .await;
        assert!(
            matches!(other, Err(LoginFailure::OtherBrowser)),
            "{other:?}"
        );
        // The provider's refusal comes through once the state and browser check out.
        let answered = oidc
            .finish(refused("known", None), Some(&known), &logins)
            .await;
        assert!(
            matches!(&answered, Err(LoginFailure::ProviderRefused { error, .. }) if error == "access_denied"),
            "{answered:?}"
        );
        let replayed = oidc
            .finish(refused("known", None), Some(&known), &logins)
            .await;
        assert!(
            matches!(replayed, Err(LoginFailure::UnknownState)),
            "{replayed:?}"
        );
        // Another node sharing the token and login key finishes a login this one started.
        let other_node = Oidc::new(options("http://127.0.0.1:1")).unwrap();
        let its_logins = logins_in(&token, dir.path());
        let elsewhere = cookie("moved", now, &logins);
        let answered = other_node
            .finish(refused("moved", None), Some(&elsewhere), &its_logins)
            .await;
        assert!(
            matches!(answered, Err(LoginFailure::ProviderRefused { .. })),
            "{answered:?}"
        );
        // Too old, or sealed under another key: nothing.
        let old = cookie("old", now - PENDING_LOGIN_LIFETIME.as_secs() - 1, &logins);
        let late = oidc.finish(refused("old", None), Some(&old), &logins).await;
        assert!(matches!(late, Err(LoginFailure::UnknownState)), "{late:?}");
        let stranger_dir = tempfile::tempdir().unwrap();
        let stranger = logins_in(&token, stranger_dir.path());
        let fresh = cookie("fresh", now, &logins);
        let foreign = oidc
            .finish(refused("fresh", None), Some(&fresh), &stranger)
            .await;
        assert!(
            matches!(foreign, Err(LoginFailure::OtherBrowser)),
            "{foreign:?}"
        );
    }

    #[tokio::test]
    async fn a_login_finishes_only_from_its_provider() {
        let dir = tempfile::tempdir().unwrap();
        let logins = logins_in(&crate::token::Secret::generate().unwrap(), dir.path());
        let oidc = Oidc::new(options("http://127.0.0.1:1")).unwrap();
        let first = cookie("a", unix_now(), &logins);
        let mixed = oidc
            .finish(
                refused("a", Some("http://127.0.0.1:3")),
                Some(&first),
                &logins,
            )
            .await;
        assert!(
            matches!(mixed, Err(LoginFailure::OtherIssuer { .. })),
            "{mixed:?}"
        );
        let second = cookie("b", unix_now(), &logins);
        let same = oidc
            .finish(
                refused("b", Some("http://127.0.0.1:1")),
                Some(&second),
                &logins,
            )
            .await;
        assert!(
            matches!(same, Err(LoginFailure::ProviderRefused { .. })),
            "{same:?}"
        );
    }
}
