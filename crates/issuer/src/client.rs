//! A small blocking HTTP client (ureq) for what talks to an issuer from outside: `gradlab
//! verify` resolving a `did:web` and fetching a status list, the bench's load generator, tests.

use std::time::Duration;

/// An HTTP answer: status and body text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub body: String,
    /// The `Location` header, for a client that does not follow redirects.
    pub location: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{url}: {detail}")]
pub struct ClientError {
    pub url: String,
    pub detail: String,
}

/// Keeps connections alive between requests (one per load-generator thread).
#[derive(Debug, Clone)]
pub struct Client {
    agent: ureq::Agent,
}

impl Default for Client {
    fn default() -> Self {
        Self::new()
    }
}

impl Client {
    pub fn new() -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        Self { agent }
    }

    /// A client that returns a redirect instead of following it (the LTI bench reads where a
    /// login and a launch send the browser).
    pub fn without_redirects() -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        Self { agent }
    }

    fn reply(url: &str, result: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Result<Reply, ClientError> {
        let error = |e: ureq::Error| ClientError {
            url: url.to_string(),
            detail: e.to_string(),
        };
        let mut response = result.map_err(error)?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let location = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = response.body_mut().read_to_string().map_err(error)?;
        Ok(Reply {
            status,
            content_type,
            body,
            location,
        })
    }

    pub fn get(&self, url: &str) -> Result<Reply, ClientError> {
        Self::reply(url, self.agent.get(url).call())
    }

    /// An `application/x-www-form-urlencoded` POST (OAuth 2 token requests).
    pub fn post_form(&self, url: &str, fields: &[(&str, &str)]) -> Result<Reply, ClientError> {
        Self::reply(url, self.agent.post(url).send_form(fields.iter().copied()))
    }

    /// A POST with a bearer token and a media type of its own (LTI AGS scores).
    pub fn post_bearer(&self, url: &str, token: &str, content_type: &str, body: &str) -> Result<Reply, ClientError> {
        Self::reply(
            url,
            self.agent
                .post(url)
                .header("authorization", format!("Bearer {token}"))
                .header("content-type", content_type)
                .send(body),
        )
    }

    /// A GET with a bearer token and an `Accept` media type (LTI AGS results).
    pub fn get_bearer(&self, url: &str, token: &str, accept: &str) -> Result<Reply, ClientError> {
        Self::reply(
            url,
            self.agent
                .get(url)
                .header("authorization", format!("Bearer {token}"))
                .header("accept", accept)
                .call(),
        )
    }

    pub fn post_json(&self, url: &str, body: &str) -> Result<Reply, ClientError> {
        Self::reply(
            url,
            self.agent
                .post(url)
                .header("content-type", "application/json")
                .send(body),
        )
    }
}
