//! The tool's RSA key pair for LTI 1.3: platforms verify its signatures (client assertions for
//! AGS access tokens, Deep Linking responses) against `/lti/jwks.json`. Generated on first start
//! into the data directory (PKCS#1 PEM, mode 0600) or loaded; rotated by moving the old one
//! aside, whose public half stays published so tokens signed just before keep verifying.
//!
//! Generation uses the `rsa` crate; every signature is made by jsonwebtoken's ring backend.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rsa::pkcs1::{DecodeRsaPrivateKey, EncodeRsaPrivateKey, LineEnding};
use rsa::traits::PublicKeyParts;
use rsa::Generate;
use serde::Serialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::LtiError;

/// The active key's file inside the data directory.
pub const TOOL_KEY_FILE: &str = "lti-tool-key.pem";
/// Where rotated tool keys go; their public halves stay in the key set.
pub const RETIRED_TOOL_KEYS_DIR: &str = "retired-lti-keys";

/// One public key as a JWK (RFC 7517), with its RFC 7638 thumbprint as `kid`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicJwk {
    pub kid: String,
    modulus: String,
    exponent: String,
}

impl PublicJwk {
    fn of(key: &rsa::PrivateKey) -> Self {
        let modulus = URL_SAFE_NO_PAD.encode(key.n_bytes());
        let exponent = URL_SAFE_NO_PAD.encode(key.e_bytes());
        // RFC 7638: the required members in lexicographic order, no spaces.
        let canonical = format!(r#"{{"e":"{exponent}","kty":"RSA","n":"{modulus}"}}"#);
        let kid = URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()));
        Self { kid, modulus, exponent }
    }

    pub fn to_json(&self) -> Value {
        json!({"kty": "RSA", "alg": "RS256", "use": "sig", "kid": self.kid, "n": self.modulus, "e": self.exponent})
    }
}

/// The key that signs, and the public keys published beside it (the retired ones).
pub struct ToolKey {
    signing: EncodingKey,
    public: PublicJwk,
    retired: Vec<PublicJwk>,
}

impl std::fmt::Debug for ToolKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolKey")
            .field("kid", &self.public.kid)
            .finish_non_exhaustive()
    }
}

fn io_error(context: String) -> impl Fn(std::io::Error) -> LtiError {
    move |e| LtiError::Key(format!("{context}: {e}"))
}

impl ToolKey {
    /// Loads the data directory's key, creating it on first start.
    pub fn load_or_create(data_dir: &Path) -> Result<Self, LtiError> {
        let path = data_dir.join(TOOL_KEY_FILE);
        let key = if path.exists() {
            read_key(&path)?
        } else {
            fs::create_dir_all(data_dir).map_err(io_error(format!("cannot create {}", data_dir.display())))?;
            create_key(&path)?
        };
        let retired = retired_keys(data_dir)?;
        Self::from_private(&key, retired)
    }

    fn from_private(key: &rsa::PrivateKey, retired: Vec<PublicJwk>) -> Result<Self, LtiError> {
        let pem = key
            .to_pkcs1_pem(LineEnding::LF)
            .map_err(|e| LtiError::Key(format!("cannot encode the tool key: {e}")))?;
        let signing = EncodingKey::from_rsa_pem(pem.as_bytes())
            .map_err(|e| LtiError::Key(format!("the tool key is not usable for RS256: {e}")))?;
        Ok(Self {
            signing,
            public: PublicJwk::of(key),
            retired,
        })
    }

    /// Moves the key aside and creates a new one; returns the old and the new `kid`.
    pub fn rotate(data_dir: &Path) -> Result<(Option<String>, String), LtiError> {
        let path = data_dir.join(TOOL_KEY_FILE);
        let old = if path.exists() {
            let old = PublicJwk::of(&read_key(&path)?);
            let retired = data_dir.join(RETIRED_TOOL_KEYS_DIR);
            fs::create_dir_all(&retired).map_err(io_error(format!("cannot create {}", retired.display())))?;
            fs::set_permissions(&retired, fs::Permissions::from_mode(0o700))
                .map_err(io_error(format!("cannot protect {}", retired.display())))?;
            let target: PathBuf = retired.join(format!("{}.pem", old.kid));
            fs::rename(&path, &target).map_err(io_error(format!("cannot move the old key to {}", target.display())))?;
            Some(old.kid)
        } else {
            fs::create_dir_all(data_dir).map_err(io_error(format!("cannot create {}", data_dir.display())))?;
            None
        };
        let new = PublicJwk::of(&create_key(&path)?);
        Ok((old, new.kid))
    }

    pub fn kid(&self) -> &str {
        &self.public.kid
    }

    /// The key set platforms fetch: the signing key first, then the retired ones.
    pub fn jwks(&self) -> Value {
        let keys: Vec<Value> = std::iter::once(&self.public)
            .chain(&self.retired)
            .map(PublicJwk::to_json)
            .collect();
        json!({ "keys": keys })
    }

    /// Each published key as (kid, JWK JSON), the signing key first.
    pub fn published(&self) -> Vec<(String, String)> {
        std::iter::once(&self.public)
            .chain(&self.retired)
            .map(|k| (k.kid.clone(), k.to_json().to_string()))
            .collect()
    }

    /// Signs claims as an RS256 JWT whose header names this key.
    pub fn sign(&self, claims: &impl Serialize) -> Result<String, LtiError> {
        let mut header = Header::new(Algorithm::RS256);
        header.kid = Some(self.public.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.signing).map_err(|e| LtiError::Key(format!("cannot sign: {e}")))
    }
}

fn read_key(path: &Path) -> Result<rsa::PrivateKey, LtiError> {
    let text = fs::read_to_string(path).map_err(io_error(format!("cannot read {}", path.display())))?;
    // The parser's detail could quote the file; say only what is wrong and where.
    rsa::PrivateKey::from_pkcs1_pem(&text).map_err(|_| {
        LtiError::Key(format!(
            "{} does not hold an RSA private key (PKCS#1 PEM)",
            path.display()
        ))
    })
}

/// Generates a 2048-bit key from the operating system's randomness and writes it readable by
/// the owner only; never overwrites a file.
fn create_key(path: &Path) -> Result<rsa::PrivateKey, LtiError> {
    let key = rsa::PrivateKey::try_generate()
        .map_err(|e| LtiError::Key(format!("the operating system gave no randomness for a key: {e}")))?;
    let pem = key
        .to_pkcs1_pem(LineEnding::LF)
        .map_err(|e| LtiError::Key(format!("cannot encode the tool key: {e}")))?;
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(io_error(format!("cannot create {}", path.display())))?;
    file.write_all(pem.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(io_error(format!("cannot write {}", path.display())))?;
    Ok(key)
}

fn retired_keys(data_dir: &Path) -> Result<Vec<PublicJwk>, LtiError> {
    let dir = data_dir.join(RETIRED_TOOL_KEYS_DIR);
    let Ok(entries) = fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "pem"))
        .collect();
    paths.sort();
    paths.iter().map(|p| read_key(p).map(|k| PublicJwk::of(&k))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_created_once_private_rotated_and_still_published() {
        let dir = tempfile::tempdir().unwrap();
        let first = ToolKey::load_or_create(dir.path()).unwrap();
        let mode = fs::metadata(dir.path().join(TOOL_KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = ToolKey::load_or_create(dir.path()).unwrap();
        assert_eq!(first.kid(), again.kid());
        assert_eq!(first.jwks()["keys"].as_array().unwrap().len(), 1);

        let (old, new) = ToolKey::rotate(dir.path()).unwrap();
        assert_eq!(old.as_deref(), Some(first.kid()));
        let rotated = ToolKey::load_or_create(dir.path()).unwrap();
        assert_eq!(rotated.kid(), new);
        let jwks = rotated.jwks();
        let kids: Vec<&str> = jwks["keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["kid"].as_str().unwrap())
            .collect();
        assert_eq!(kids, vec![new.as_str(), first.kid()]);
    }

    #[test]
    fn a_signature_verifies_against_the_published_key_and_only_that_key() {
        let dir = tempfile::tempdir().unwrap();
        let key = ToolKey::load_or_create(dir.path()).unwrap();
        let token = key.sign(&json!({"iss": "tool", "exp": 4_000_000_000u64})).unwrap();
        let header = jsonwebtoken::decode_header(&token).unwrap();
        assert_eq!(header.kid.as_deref(), Some(key.kid()));
        let jwk = &key.jwks()["keys"][0];
        let decoding =
            jsonwebtoken::DecodingKey::from_rsa_components(jwk["n"].as_str().unwrap(), jwk["e"].as_str().unwrap())
                .unwrap();
        let mut validation = jsonwebtoken::Validation::new(Algorithm::RS256);
        validation.required_spec_claims.clear();
        let claims = jsonwebtoken::decode::<Value>(&token, &decoding, &validation)
            .unwrap()
            .claims;
        assert_eq!(claims["iss"], "tool");

        let other = tempfile::tempdir().unwrap();
        let other = ToolKey::load_or_create(other.path()).unwrap();
        let forged = other.sign(&json!({"iss": "tool", "exp": 4_000_000_000u64})).unwrap();
        assert!(jsonwebtoken::decode::<Value>(&forged, &decoding, &validation).is_err());
    }
}
