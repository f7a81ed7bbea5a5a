//! The settings of `gradlab issuer serve`, checked once at start-up.

use std::net::SocketAddr;
use std::path::PathBuf;

use super::IssuerError;

/// Default issuance rate per client address: a learner needs one; a class behind one NAT a few dozen.
pub const DEFAULT_ISSUES_PER_MINUTE: u32 = 30;

#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub listen: SocketAddr,
    pub data_dir: PathBuf,
    /// Where learners reach the app and the API, without a trailing slash: gives the `did:web`
    /// and the share links.
    pub public_url: String,
    pub database_url: Option<String>,
    /// Origins (scheme://host[:port]) whose pages may POST issuance requests; the read-only
    /// routes are open to every origin, since anyone may verify.
    pub allowed_origins: Vec<String>,
    pub key_file: Option<PathBuf>,
    /// The built app (`dist/`) to serve beside the API, for a one-binary deployment.
    pub dist: Option<PathBuf>,
    /// Issuances per minute per client address; 0 turns the limit off (load tests).
    pub issues_per_minute: u32,
    /// Take the client address from `X-Forwarded-For` (only behind a proxy that sets it).
    pub trust_forwarded_for: bool,
    pub issuer_name: String,
}

/// Checks an http(s) URL with a host and no query or fragment; returns it without a trailing slash.
pub fn normalize_public_url(url: &str) -> Result<String, IssuerError> {
    let bad = |why: &str| IssuerError::Config(format!("--public-url \"{url}\" {why}"));
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or_else(|| bad("must start with http:// or https://"))?;
    if url.contains(['?', '#']) || url.chars().any(char::is_whitespace) {
        return Err(bad("must not have a query, fragment or spaces"));
    }
    let host = rest.split('/').next().unwrap_or_default();
    if host.is_empty() || host.contains('@') {
        return Err(bad("must name a host (and no user name)"));
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// Checks an origin as browsers send it: scheme://host[:port], nothing more.
pub fn normalize_origin(origin: &str) -> Result<String, IssuerError> {
    let bad = || IssuerError::Config(format!("--allowed-origin \"{origin}\" must be scheme://host[:port]"));
    let normalized = normalize_public_url(origin).map_err(|_| bad())?;
    let after_scheme = normalized.split("://").nth(1).unwrap_or_default();
    if after_scheme.contains('/') {
        return Err(bad());
    }
    Ok(normalized.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_urls_and_origins_are_checked() {
        assert_eq!(
            normalize_public_url("http://127.0.0.1:8080/").unwrap(),
            "http://127.0.0.1:8080"
        );
        assert_eq!(
            normalize_public_url("https://course.example/lab").unwrap(),
            "https://course.example/lab"
        );
        for bad in ["ftp://x", "http://", "https://a?b=1", "https://u@host", "lab.example"] {
            assert!(normalize_public_url(bad).is_err(), "{bad}");
        }
        assert_eq!(
            normalize_origin("https://Moodle.Example").unwrap(),
            "https://moodle.example"
        );
        assert!(normalize_origin("https://moodle.example/course").is_err());
    }
}
