//! The issuer's Ed25519 signing key: generated on first start into the data directory (mode
//! 0600), or loaded from a configured file; rotated by moving the old one aside. The secret
//! never leaves this module in any printable form: `Debug` shows the key id only.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use ed25519_dalek::{SigningKey, VerifyingKey};

use super::IssuerError;
use gradlab_credential::multikey;

/// The active key's file inside the data directory.
pub const KEY_FILE: &str = "issuer-key.secret";
/// Where rotated keys are kept (their public halves stay published through the database).
pub const RETIRED_DIR: &str = "retired-keys";

/// The key that signs, with its id (the fragment of its verification method).
pub struct IssuerKey {
    signing: SigningKey,
    key_id: String,
}

impl std::fmt::Debug for IssuerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuerKey")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

fn io_error(context: String) -> impl Fn(std::io::Error) -> IssuerError {
    move |e| IssuerError::Io {
        context: context.clone(),
        detail: e.to_string(),
    }
}

impl IssuerKey {
    pub fn from_signing_key(signing: SigningKey) -> Self {
        let key_id = multikey::key_id(&signing.verifying_key());
        Self { signing, key_id }
    }

    /// Loads `key_file` when given (it must exist), else the data directory's key, creating it
    /// on first start.
    pub fn load_or_create(data_dir: &Path, key_file: Option<&Path>) -> Result<Self, IssuerError> {
        match key_file {
            Some(path) => Self::load(path),
            None => {
                let path = data_dir.join(KEY_FILE);
                if path.exists() {
                    Self::load(&path)
                } else {
                    fs::create_dir_all(data_dir).map_err(io_error(format!(
                        "cannot create the data directory {}",
                        data_dir.display()
                    )))?;
                    Self::create(&path)
                }
            }
        }
    }

    fn load(path: &Path) -> Result<Self, IssuerError> {
        let text =
            fs::read_to_string(path).map_err(io_error(format!("cannot read the key file {}", path.display())))?;
        let signing = multikey::parse_secret_key_multibase(text.trim()).map_err(|_| {
            // The parser's detail could quote the file; say only what is wrong and where.
            IssuerError::Config(format!(
                "the key file {} does not hold an Ed25519 secret key in multibase form",
                path.display()
            ))
        })?;
        Ok(Self::from_signing_key(signing))
    }

    /// Generates a key from the operating system's randomness and writes it readable by the
    /// owner only; never overwrites an existing file.
    fn create(path: &Path) -> Result<Self, IssuerError> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| IssuerError::Io {
            context: "the operating system gave no randomness for a new key".into(),
            detail: e.to_string(),
        })?;
        let key = Self::from_signing_key(SigningKey::from_bytes(&secret));
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .map_err(io_error(format!("cannot create the key file {}", path.display())))?;
        file.write_all(multikey::secret_key_multibase(&key.signing).as_bytes())
            .and_then(|()| file.write_all(b"\n"))
            .and_then(|()| file.sync_all())
            .map_err(io_error(format!("cannot write the key file {}", path.display())))?;
        Ok(key)
    }

    /// Moves the data directory's key into `retired-keys/` and creates a new one; returns the
    /// old and the new key id.
    pub fn rotate(data_dir: &Path) -> Result<(Option<String>, Self), IssuerError> {
        let path = data_dir.join(KEY_FILE);
        let old = if path.exists() {
            let old = Self::load(&path)?;
            let retired = data_dir.join(RETIRED_DIR);
            fs::create_dir_all(&retired).map_err(io_error(format!("cannot create {}", retired.display())))?;
            fs::set_permissions(&retired, fs::Permissions::from_mode(0o700))
                .map_err(io_error(format!("cannot protect {}", retired.display())))?;
            let target: PathBuf = retired.join(format!("{}.secret", old.key_id));
            fs::rename(&path, &target).map_err(io_error(format!("cannot move the old key to {}", target.display())))?;
            Some(old.key_id)
        } else {
            fs::create_dir_all(data_dir).map_err(io_error(format!(
                "cannot create the data directory {}",
                data_dir.display()
            )))?;
            None
        };
        Ok((old, Self::create(&path)?))
    }

    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    pub fn verifying_key(&self) -> VerifyingKey {
        self.signing.verifying_key()
    }

    pub fn signing_key(&self) -> &SigningKey {
        &self.signing
    }

    pub fn public_key_multibase(&self) -> String {
        multikey::public_key_multibase(&self.verifying_key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_key_is_private_to_its_owner_and_reloads() {
        let dir = tempfile::tempdir().unwrap();
        let created = IssuerKey::load_or_create(dir.path(), None).unwrap();
        let mode = fs::metadata(dir.path().join(KEY_FILE)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let loaded = IssuerKey::load_or_create(dir.path(), None).unwrap();
        assert_eq!(created.key_id(), loaded.key_id());
        assert!(!format!("{created:?}").contains(&multikey::secret_key_multibase(created.signing_key())));
    }

    #[test]
    fn rotation_keeps_the_old_key_aside_and_makes_a_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let first = IssuerKey::load_or_create(dir.path(), None).unwrap();
        let (old, second) = IssuerKey::rotate(dir.path()).unwrap();
        assert_eq!(old.as_deref(), Some(first.key_id()));
        assert_ne!(first.key_id(), second.key_id());
        assert!(dir
            .path()
            .join(RETIRED_DIR)
            .join(format!("{}.secret", first.key_id()))
            .exists());
        assert_eq!(
            IssuerKey::load_or_create(dir.path(), None).unwrap().key_id(),
            second.key_id()
        );
    }

    #[test]
    fn a_bad_key_file_is_refused_without_quoting_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k");
        fs::write(&path, "zSECRET-LOOKING-TEXT").unwrap();
        let error = IssuerKey::load_or_create(dir.path(), Some(&path))
            .unwrap_err()
            .to_string();
        assert!(error.contains("does not hold an Ed25519 secret key"), "{error}");
        assert!(!error.contains("SECRET-LOOKING"), "{error}");
    }
}
