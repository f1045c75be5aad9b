//! A private certificate authority made at test time (rcgen): its root, a server
//! certificate for 127.0.0.1 and `localhost`, and a client certificate, as PEM files in a
//! temporary directory, for the TLS scenarios of the scale-out tests.

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use std::path::{Path, PathBuf};

/// The PEM files of a private CA and the certificates it signed.
pub struct TestPki {
    dir: tempfile::TempDir,
}

impl TestPki {
    /// A new CA and, signed by it, a server and a client certificate.
    pub fn generate() -> Self {
        let dir = tempfile::tempdir().expect("pki dir");
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "troupe test CA");
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("ca key"))
            .expect("self-signed CA");
        write(dir.path(), "ca.pem", &ca.pem());
        let leaf = |name: &str, sans: Vec<String>, usage: ExtendedKeyUsagePurpose| {
            let key = KeyPair::generate().expect("leaf key");
            let mut params = CertificateParams::new(sans).expect("leaf params");
            params.distinguished_name.push(DnType::CommonName, name);
            params.extended_key_usages = vec![usage];
            let cert = params.signed_by(&key, &ca).expect("signed leaf");
            write(dir.path(), &format!("{name}.pem"), &cert.pem());
            write(dir.path(), &format!("{name}-key.pem"), &key.serialize_pem());
        };
        leaf(
            "server",
            vec!["127.0.0.1".into(), "localhost".into()],
            ExtendedKeyUsagePurpose::ServerAuth,
        );
        leaf(
            "client",
            vec!["troupe-client".into()],
            ExtendedKeyUsagePurpose::ClientAuth,
        );
        Self { dir }
    }

    /// The CA's root certificate.
    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    pub fn server_cert(&self) -> PathBuf {
        self.dir.path().join("server.pem")
    }

    pub fn server_key(&self) -> PathBuf {
        self.dir.path().join("server-key.pem")
    }

    pub fn client_cert(&self) -> PathBuf {
        self.dir.path().join("client.pem")
    }

    pub fn client_key(&self) -> PathBuf {
        self.dir.path().join("client-key.pem")
    }
}

fn write(dir: &Path, name: &str, pem: &str) {
    std::fs::write(dir.join(name), pem).expect("write a PEM file");
}
