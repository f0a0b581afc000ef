//! HTTPS, and client certificates, with certificates made in the test and a
//! rustls client over 127.0.0.1.

mod common;

use std::sync::Arc;

use common::*;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolgate_serve::{RequestLimits, TlsFiles};

struct Pki {
    dir: tempfile::TempDir,
    ca: rcgen::Certificate,
    ca_key: rcgen::KeyPair,
}

fn pki() -> Pki {
    let dir = tempfile::tempdir().expect("a directory");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "toolgate test CA");
    let ca_key = rcgen::KeyPair::generate().expect("a key");
    let ca = params.self_signed(&ca_key).expect("the CA");
    std::fs::write(dir.path().join("ca.pem"), ca.pem()).expect("write");
    Pki { dir, ca, ca_key }
}

impl Pki {
    /// A certificate the CA issued, written as NAME.pem and NAME.key.
    fn issue(&self, name: &str, sans: &[&str]) -> (Vec<u8>, Vec<u8>) {
        let params =
            rcgen::CertificateParams::new(sans.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .expect("params");
        let key = rcgen::KeyPair::generate().expect("a key");
        let cert = params
            .signed_by(&key, &self.ca, &self.ca_key)
            .expect("issued");
        std::fs::write(self.dir.path().join(format!("{name}.pem")), cert.pem()).expect("write");
        std::fs::write(
            self.dir.path().join(format!("{name}.key")),
            key.serialize_pem(),
        )
        .expect("write");
        (cert.der().to_vec(), key.serialize_der())
    }

    fn files(&self, client_ca: bool) -> TlsFiles {
        TlsFiles {
            cert: self.dir.path().join("server.pem"),
            key: self.dir.path().join("server.key"),
            client_ca: client_ca.then(|| self.dir.path().join("ca.pem")),
        }
    }

    fn client(&self, identity: Option<(Vec<u8>, Vec<u8>)>) -> tokio_rustls::TlsConnector {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from(self.ca.der().to_vec()))
            .expect("root");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_root_certificates(roots);
        let config = match identity {
            None => builder.with_no_client_auth(),
            Some((cert, key)) => builder
                .with_client_auth_cert(
                    vec![CertificateDer::from(cert)],
                    PrivateKeyDer::try_from(key).expect("a key"),
                )
                .expect("client auth"),
        };
        tokio_rustls::TlsConnector::from(Arc::new(config))
    }
}

/// `GET /health` over TLS; the status line, or the error.
async fn health(s: &Running, connector: &tokio_rustls::TlsConnector) -> Result<String, String> {
    let addr = s.base.split("://").nth(1).unwrap_or_default().to_string();
    let tcp = tokio::net::TcpStream::connect(&addr)
        .await
        .map_err(|e| e.to_string())?;
    let name = ServerName::try_from("localhost").map_err(|e| e.to_string())?;
    let mut tls = connector
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    tls.write_all(b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    tls.read_to_string(&mut answer)
        .await
        .map_err(|e| e.to_string())?;
    Ok(answer.lines().next().unwrap_or_default().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_speaks_tls_and_can_require_client_certificates() {
    let p = pki();
    p.issue("server", &["localhost"]);
    let source = profiles_source();
    let t = source.load().expect("compiles");
    let config = p.files(false).server_config().expect("TLS config");
    let s = start_with(t, Some(source), RequestLimits::default(), None, |svc| {
        svc.with_tls(config)
    })
    .await;
    assert_eq!(
        health(&s, &p.client(None)).await.as_deref(),
        Ok("HTTP/1.1 200 OK")
    );
    // Plain HTTP to a TLS port gets no answer.
    let plain = s.client.get(format!("{}/health", s.base)).send().await;
    assert!(plain.is_err(), "plain HTTP was answered");
    s.stop().await;

    let source = profiles_source();
    let t = source.load().expect("compiles");
    let config = p.files(true).server_config().expect("TLS config");
    let s = start_with(t, Some(source), RequestLimits::default(), None, |svc| {
        svc.with_tls(config)
    })
    .await;
    let without = health(&s, &p.client(None)).await;
    assert!(
        without.is_err() || without.as_deref() == Ok(""),
        "{without:?}"
    );
    let id = p.issue("client", &["pep.example"]);
    assert_eq!(
        health(&s, &p.client(Some(id))).await.as_deref(),
        Ok("HTTP/1.1 200 OK")
    );
    s.stop().await;
    // A key that is not PEM is a clear error at start.
    std::fs::write(p.dir.path().join("server.key"), "not a key").expect("write");
    let e = p.files(false).server_config().err();
    assert!(
        matches!(&e, Some(toolgate_serve::CoreError::Tls(m)) if m.ends_with("server.key: no items found")),
        "{e:?}"
    );
}
