//! TLS for `rediss://` connections: which CAs are trusted, the client certificate
//! for mutual TLS, and messages that say what a failed handshake means.
//!
//! Trust comes from `tls_ca_file` when it is set (then only that file's CAs), else
//! from the OS store (what `update-ca-certificates` manages, or `SSL_CERT_FILE` /
//! `SSL_CERT_DIR`), else, when the OS store is empty, from the Mozilla roots built
//! into the module. Files are read each time a connection is made, so a renewed
//! certificate is used without restarting PHP; connections are persistent, so that
//! is rare.

use crate::config::TlsFiles;
use redis::{ClientTlsConfig, RedisError, TlsCertificates};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::sync::Arc;

impl TlsFiles {
    /// Reads the files for one connection. The error names the file and the reason,
    /// and never shows a key's contents.
    pub fn certificates(&self) -> Result<TlsCertificates, String> {
        let root_cert = match &self.ca_file {
            Some(path) => Some(read_certificates("tls_ca_file", path)?),
            None => os_roots(),
        };
        let client_tls = match (&self.cert_file, &self.key_file) {
            (Some(cert), Some(key)) => Some(ClientTlsConfig {
                client_cert: read_certificates("tls_cert_file", cert)?,
                client_key: read_key(key)?,
            }),
            _ => None,
        };
        Ok(TlsCertificates { client_tls, root_cert })
    }
}

impl TlsFiles {
    /// The rustls settings of the command connection (`wire`), which speaks TLS itself
    /// so that a waiter listens on it as over plain TCP: the same trust and client
    /// certificate as `certificates`, with the Mozilla roots built in when neither
    /// `tls_ca_file` nor the OS store gives any. `insecure` (`#insecure` in the DSN)
    /// accepts any certificate and sends no SNI, as redis-rs does; the handshake's
    /// signature is still checked against the certificate the server sent.
    pub fn client_config(&self, insecure: bool) -> Result<Arc<ClientConfig>, String> {
        let files = self.certificates()?;
        let mut roots = RootCertStore::empty();
        match &files.root_cert {
            Some(pem) => {
                for cert in CertificateDer::pem_slice_iter(pem).flatten() {
                    // A certificate rustls cannot use as a trust anchor is left out, as
                    // redis-rs leaves it out of its store.
                    let _ = roots.add(cert);
                }
            }
            None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS settings: {e}"))?
            .with_root_certificates(roots);
        let mut config = match files.client_tls {
            Some(client) => {
                let chain = CertificateDer::pem_slice_iter(&client.client_cert)
                    .collect::<Result<Vec<_>, _>>();
                let key = PrivateKeyDer::from_pem_slice(&client.client_key);
                let (Ok(chain), Ok(key)) = (chain, key) else {
                    // `certificates` checked that these very bytes parse.
                    return Err("tls_cert_file or tls_key_file could not be parsed".to_string());
                };
                // The reason names the mismatch (a key that is not the certificate's),
                // never the key itself.
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| format!("tls_cert_file and tls_key_file: {e}"))?
            }
            None => builder.with_no_client_auth(),
        };
        if insecure {
            config.enable_sni = false;
            config.dangerous().set_certificate_verifier(Arc::new(AnyCertificate(provider)));
        }
        Ok(Arc::new(config))
    }
}

/// `#insecure`: any certificate is accepted; the handshake's signature must still be
/// made by its key, which costs nothing and keeps the session honest to the end
/// that sent it.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

fn read(setting: &str, path: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            _ => e.to_string(),
        };
        format!("{setting} \"{path}\" cannot be read: {why}")
    })
}

/// A PEM file of one or more certificates, checked to parse.
fn read_certificates(setting: &str, path: &str) -> Result<Vec<u8>, String> {
    let pem = read(setting, path)?;
    let mut count = 0;
    for cert in CertificateDer::pem_slice_iter(&pem) {
        cert.map_err(|_| format!("{setting} \"{path}\" is not a valid PEM certificate file"))?;
        count += 1;
    }
    if count == 0 {
        return Err(format!("{setting} \"{path}\" holds no PEM certificate"));
    }
    Ok(pem)
}

/// A PEM private key. The parser's own message could quote a line of the file, so
/// the reason is given without it.
fn read_key(path: &str) -> Result<Vec<u8>, String> {
    let pem = read("tls_key_file", path)?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|_| {
        format!("tls_key_file \"{path}\" holds no PEM private key (PKCS#8, RSA or EC)")
    })?;
    Ok(pem)
}

/// The OS store as one PEM bundle, keeping only the certificates rustls accepts as
/// trust anchors; `None` when it has none, so that the built-in roots are used.
fn os_roots() -> Option<Vec<u8>> {
    let found = rustls_native_certs::load_native_certs();
    let mut store = rustls::RootCertStore::empty();
    let mut pem = Vec::new();
    for cert in found.certs {
        if store.add(cert.clone()).is_ok() {
            pem_encode(&cert, &mut pem);
        }
    }
    (!store.is_empty()).then_some(pem)
}

fn pem_encode(der: &[u8], out: &mut Vec<u8>) {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut b64 = Vec::with_capacity(der.len() * 4 / 3 + 4);
    for chunk in der.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            b64.push(if i <= chunk.len() {
                ALPHABET[(n >> (18 - 6 * i) & 63) as usize]
            } else {
                b'='
            });
        }
    }
    out.extend_from_slice(b"-----BEGIN CERTIFICATE-----\n");
    for line in b64.chunks(64) {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out.extend_from_slice(b"-----END CERTIFICATE-----\n");
}

/// What a failure on a new connection means, in words, when it is about TLS:
/// a handshake refused by either side, or the two ends speaking different protocols.
/// `tls` says whether this end spoke TLS.
pub fn explain(e: &RedisError, tls: bool) -> Option<String> {
    let text = e.to_string();
    let has = |s: &str| text.contains(s);
    let handshake = |why: &str| Some(format!("TLS handshake failed: {why}"));
    if tls {
        if has("UnknownIssuer") {
            return handshake("the server's certificate is signed by a CA this client does not trust (unknown issuer); name that CA in tls_ca_file, or add it to the OS store");
        }
        if has("NotValidForName") || has("not valid for name") {
            return handshake(
                "the server's certificate is not valid for this host name (name mismatch)",
            );
        }
        if has("Expired") || has("certificate expired") {
            return handshake("the server's certificate has expired");
        }
        if has("NotValidYet") || has("certificate not valid yet") {
            return handshake("the server's certificate is not valid yet");
        }
        if has("CertificateRequired") || (has("HandshakeFailure") && has("alert")) {
            return handshake(
                "the server requires a client certificate (set tls_cert_file and tls_key_file)",
            );
        }
        if has("UnknownCA") || has("BadCertificate") || has("DecryptError") {
            return handshake(&format!("the server refused the client certificate ({text})"));
        }
        if has("InvalidContentType") || has("corrupt message") || has("InvalidMessage") {
            return Some("this client speaks TLS but the server does not, on this port (a plain Redis port? use redis://)".to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_encoding_round_trips() {
        for len in 0..12 {
            let der: Vec<u8> = (0..len * 7 + 1).map(|i| (i * 37 % 256) as u8).collect();
            let mut pem = Vec::new();
            pem_encode(&der, &mut pem);
            let back: Vec<_> =
                CertificateDer::pem_slice_iter(&pem).collect::<Result<_, _>>().expect("parses");
            assert_eq!(back.len(), 1);
            assert_eq!(back[0].as_ref(), der.as_slice());
        }
    }

    #[test]
    fn the_connections_settings_name_a_bad_file_and_insecure_sends_no_sni() {
        let missing =
            TlsFiles { ca_file: Some("/nonexistent/ca.pem".into()), ..Default::default() };
        assert!(missing
            .client_config(false)
            .unwrap_err()
            .contains("tls_ca_file \"/nonexistent/ca.pem\""));
        assert!(TlsFiles::default().client_config(false).expect("builds").enable_sni);
        assert!(!TlsFiles::default().client_config(true).expect("builds").enable_sni);
    }

    #[test]
    fn unreadable_files_are_named_and_keys_are_not_quoted() {
        let missing =
            TlsFiles { ca_file: Some("/nonexistent/ca.pem".into()), ..Default::default() };
        assert_eq!(
            missing.certificates().unwrap_err(),
            "tls_ca_file \"/nonexistent/ca.pem\" cannot be read: no such file"
        );
        let dir = std::env::temp_dir().join(format!("redis-lock-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let garbage = dir.join("key.pem");
        std::fs::write(&garbage, "-----BEGIN PRIVATE KEY-----\nsecret-material!!\n").unwrap();
        let files = TlsFiles {
            ca_file: None,
            cert_file: Some(garbage.display().to_string()),
            key_file: Some(garbage.display().to_string()),
        };
        let err = files.certificates().unwrap_err();
        assert!(err.contains("tls_cert_file"), "{err}");
        let only_key = read_key(&garbage.display().to_string()).unwrap_err();
        assert!(
            only_key.contains("holds no PEM private key") && !only_key.contains("secret"),
            "{only_key}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
