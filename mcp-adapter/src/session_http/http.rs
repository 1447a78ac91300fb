//! The HTTP client behind rmcp's Streamable HTTP transport for session servers:
//!
//! - redirects are never followed (SMS-04);
//! - names are resolved by [`GuardedResolver`], which refuses the whole answer when **any**
//!   address is not public (SMS-04, DNS rebinding);
//! - no proxy from the environment (the URL must not leave through a third party);
//! - transport errors lose their URL before anything (rmcp's own logging included) can print
//!   them (SMS-05).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::policy::SessionUrlPolicy;

/// A resolved name had a non-public address (SMS-04). Says nothing about the name.
#[derive(Debug, thiserror::Error)]
#[error("the server's name resolves to a non-public address")]
pub struct NonPublicAddress;

/// A resolver that answers only when every address of the name is admitted by the policy.
#[derive(Debug, Clone, Copy)]
pub struct GuardedResolver {
    policy: SessionUrlPolicy,
}

impl GuardedResolver {
    /// A resolver for `policy`.
    pub fn new(policy: SessionUrlPolicy) -> Self {
        Self { policy }
    }

    /// The check on one resolution result: all admitted, else refused (none is used).
    pub fn screen(&self, addrs: Vec<SocketAddr>) -> Result<Vec<SocketAddr>, NonPublicAddress> {
        if addrs.is_empty() || addrs.iter().any(|a| !self.policy.admits(a.ip())) {
            return Err(NonPublicAddress);
        }
        Ok(addrs)
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let this = *self;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let addrs = this.screen(addrs)?;
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// `reqwest::Client` configured for session servers, as an rmcp [`StreamableHttpClient`].
#[derive(Debug, Clone)]
pub struct GuardedHttpClient {
    inner: reqwest::Client,
}

impl GuardedHttpClient {
    /// Builds the client. `connect_timeout` bounds each TCP/TLS connect.
    pub fn new(
        policy: SessionUrlPolicy,
        connect_timeout: Duration,
    ) -> Result<Self, reqwest::Error> {
        let inner = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(Arc::new(GuardedResolver::new(policy)))
            .connect_timeout(connect_timeout)
            .pool_max_idle_per_host(0)
            .build()?;
        Ok(Self { inner })
    }
}

fn strip_url<T>(
    r: Result<T, StreamableHttpError<reqwest::Error>>,
) -> Result<T, StreamableHttpError<reqwest::Error>> {
    r.map_err(|e| match e {
        StreamableHttpError::Client(e) => StreamableHttpError::Client(e.without_url()),
        other => other,
    })
}

impl StreamableHttpClient for GuardedHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        strip_url(
            self.inner
                .post_message(uri, message, session_id, auth_header, custom_headers)
                .await,
        )
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        strip_url(
            self.inner
                .post_message_with_max_sse_event_size(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    max_sse_event_size,
                )
                .await,
        )
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        strip_url(
            self.inner
                .post_message_with_response_limits(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    limits,
                )
                .await,
        )
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<reqwest::Error>> {
        strip_url(
            self.inner
                .delete_session(uri, session_id, auth_header, custom_headers)
                .await,
        )
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, StreamableHttpError<reqwest::Error>> {
        strip_url(
            self.inner
                .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
                .await,
        )
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxedSseResponse, StreamableHttpError<reqwest::Error>> {
        strip_url(
            self.inner
                .get_stream_with_max_sse_event_size(
                    uri,
                    session_id,
                    last_event_id,
                    auth_header,
                    custom_headers,
                    max_sse_event_size,
                )
                .await,
        )
    }
}

/// Whether a transport error means the request never reached the server (connection
/// refused, DNS refused): walks the error chain for rmcp's HTTP error around a reqwest
/// connect error.
pub fn is_connect_error(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cur {
        if let Some(StreamableHttpError::Client(r)) =
            e.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return r.is_connect();
        }
        if let Some(r) = e.downcast_ref::<reqwest::Error>() {
            return r.is_connect();
        }
        cur = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// SMS-04: one non-public address among public ones refuses the whole answer.
    #[test]
    fn sms04_any_non_public_address_refuses_the_resolution() {
        let strict = GuardedResolver::new(SessionUrlPolicy::strict());
        let public: SocketAddr = "93.184.216.34:443".parse().unwrap();
        let private: SocketAddr = "10.0.0.7:443".parse().unwrap();
        let loopback: SocketAddr = "127.0.0.1:443".parse().unwrap();
        assert!(strict.screen(vec![public]).is_ok());
        assert!(strict.screen(vec![public, private]).is_err());
        assert!(strict.screen(vec![loopback]).is_err());
        assert!(strict.screen(vec![]).is_err());
        let tests = GuardedResolver::new(SessionUrlPolicy::loopback_for_tests());
        assert!(tests.screen(vec![loopback]).is_ok());
        assert!(tests.screen(vec![loopback, private]).is_err());
    }
}
