//! TLS to the pool's NATS server from `[cluster]`: the roots of a private CA, a client
//! certificate for a server that verifies clients, and whether TLS is required. async-nats
//! (rustls) reads the files itself when it connects; they are checked here first, so a bad
//! path or a file with nothing usable in it is an error naming its key, not a handshake
//! failure.

use crate::ClusterError;
use async_nats::rustls::pki_types::pem::PemObject;
use async_nats::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use async_nats::ConnectOptions;
use std::path::{Path, PathBuf};
use troupe_config::cluster::ClusterToml;

/// `tls_*` of `[cluster]`, checked for consistency (not yet for the files' contents).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    ca_file: Option<PathBuf>,
    client: Option<ClientCertificate>,
    required: bool,
}

/// A client certificate and its key: the two go together.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ClientCertificate {
    cert_file: PathBuf,
    key_file: PathBuf,
}

impl TlsOptions {
    /// Whether a client certificate is configured.
    pub fn has_client_certificate(&self) -> bool {
        self.client.is_some()
    }

    pub fn from_config(config: &ClusterToml) -> Result<Self, ClusterError> {
        let client = match (&config.tls_cert_file, &config.tls_key_file) {
            (Some(cert_file), Some(key_file)) => Some(ClientCertificate {
                cert_file: cert_file.clone(),
                key_file: key_file.clone(),
            }),
            (None, None) => None,
            (Some(_), None) | (None, Some(_)) => {
                return Err(ClusterError::Config(
                    "`tls_cert_file` and `tls_key_file` go together (a client certificate \
                     and its private key)"
                        .into(),
                ))
            }
        };
        Ok(Self {
            ca_file: config.tls_ca_file.clone(),
            client,
            required: config.tls_required.unwrap_or(false),
        })
    }

    /// Whether TLS is required whatever the URL and the server say.
    pub fn required(&self) -> bool {
        self.required
    }

    /// `options` with the roots, the client certificate and the requirement added, once
    /// every file named is readable and holds what its key says.
    pub fn apply(&self, mut options: ConnectOptions) -> Result<ConnectOptions, ClusterError> {
        if let Some(ca_file) = &self.ca_file {
            check_certificates("tls_ca_file", ca_file)?;
            options = options.add_root_certificates(ca_file.clone());
        }
        if let Some(client) = &self.client {
            check_certificates("tls_cert_file", &client.cert_file)?;
            check_private_key(&client.key_file)?;
            options =
                options.add_client_certificate(client.cert_file.clone(), client.key_file.clone());
        }
        Ok(options.require_tls(self.required))
    }
}

/// `path` is readable and holds at least one PEM certificate.
fn check_certificates(key: &'static str, path: &Path) -> Result<(), ClusterError> {
    let pem = read(key, path)?;
    let mut count = 0;
    for certificate in CertificateDer::pem_slice_iter(&pem) {
        certificate.map_err(|err| unusable(key, path, format!("bad PEM: {err}")))?;
        count += 1;
    }
    if count == 0 {
        return Err(unusable(key, path, "it holds no PEM certificate".into()));
    }
    Ok(())
}

/// `path` is readable and holds a PEM private key.
fn check_private_key(path: &Path) -> Result<(), ClusterError> {
    let key = "tls_key_file";
    let pem = read(key, path)?;
    PrivateKeyDer::from_pem_slice(&pem)
        .map(drop)
        .map_err(|err| unusable(key, path, format!("it holds no PEM private key ({err})")))
}

/// What went wrong when `err` is a failed TLS handshake (with what to set in `[cluster]`
/// when that is the likely fix); `None` for any other failure.
pub fn handshake_failure(err: &async_nats::ConnectError) -> Option<String> {
    let rustls_error = rustls_error_under(err)?;
    let hint = match rustls_error {
        async_nats::rustls::Error::InvalidCertificate(_) => {
            " (the server's certificate is not trusted: a certificate from a private CA \
             needs that CA in [cluster] tls_ca_file)"
        }
        async_nats::rustls::Error::AlertReceived(_) => {
            " (the server refused this client: a server that verifies clients needs \
             [cluster] tls_cert_file and tls_key_file, signed by a CA it trusts)"
        }
        _ => "",
    };
    Some(format!("{rustls_error}{hint}"))
}

/// The rustls error in `err`'s chain of sources, also inside an I/O error (how
/// tokio-rustls reports a failed handshake).
fn rustls_error_under<'a>(
    err: &'a (dyn std::error::Error + 'static),
) -> Option<&'a async_nats::rustls::Error> {
    let mut current = Some(err);
    while let Some(err) = current {
        if let Some(found) = err.downcast_ref::<async_nats::rustls::Error>() {
            return Some(found);
        }
        let inner = err
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .and_then(|inner| inner.downcast_ref::<async_nats::rustls::Error>());
        if inner.is_some() {
            return inner;
        }
        current = err.source();
    }
    None
}

fn read(key: &'static str, path: &Path) -> Result<Vec<u8>, ClusterError> {
    std::fs::read(path).map_err(|err| unusable(key, path, err.to_string()))
}

fn unusable(key: &'static str, path: &Path, reason: String) -> ClusterError {
    ClusterError::CredentialsFile {
        what: key,
        path: path.display().to_string(),
        reason,
    }
}

#[cfg(test)]
#[path = "tls_tests.rs"]
mod tests;
