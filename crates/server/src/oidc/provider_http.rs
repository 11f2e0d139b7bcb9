//! The HTTP client the OpenID provider is asked with: Hearth's reqwest behind the
//! `openidconnect` crate's client trait (its own bundled client is an older reqwest).

use std::future::Future;
use std::pin::Pin;

use openidconnect::{AsyncHttpClient, HttpRequest, HttpResponse};

use super::failure::error_chain;

/// The largest answer read from the provider.
const MAX_PROVIDER_RESPONSE_BYTES: usize = 1024 * 1024;

/// The HTTP client the provider is asked with: Hearth's reqwest, no redirects followed
/// (discovery and the token endpoint must answer themselves), bounded answers.
pub(crate) struct ProviderHttp(pub reqwest::Client);

/// A request to the provider that failed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ProviderHttpError(String);

impl<'c> AsyncHttpClient<'c> for ProviderHttp {
    type Error = ProviderHttpError;
    type Future =
        Pin<Box<dyn Future<Output = std::result::Result<HttpResponse, Self::Error>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(async move {
            let request = reqwest::Request::try_from(request)
                .map_err(|error| ProviderHttpError(error_chain(&error)))?;
            let url = request.url().clone();
            let mut response = self
                .0
                .execute(request)
                .await
                .map_err(|error| ProviderHttpError(error_chain(&error)))?;
            let mut answer = HttpResponse::new(Vec::new());
            *answer.status_mut() = response.status();
            *answer.headers_mut() = response.headers().clone();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|error| ProviderHttpError(error_chain(&error)))?
            {
                if answer.body().len() + chunk.len() > MAX_PROVIDER_RESPONSE_BYTES {
                    return Err(ProviderHttpError(format!(
                        "{url} answered more than {MAX_PROVIDER_RESPONSE_BYTES} bytes"
                    )));
                }
                answer.body_mut().extend_from_slice(&chunk);
            }
            Ok(answer)
        })
    }
}
