#![allow(dead_code)]
//! A real OCI registry for the tests: the CNCF distribution registry
//! (Debian's `docker-registry`, `/usr/bin/docker-registry`) on 127.0.0.1,
//! an ephemeral port, storage in a temporary directory. Started by the
//! test, killed when dropped. Not installed or not starting is a failure
//! (`.ci/run` installs it), never a skip.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct TestDistribution {
    child: Child,
    pub addr: SocketAddr,
    pub dir: tempfile::TempDir,
}

const BINARY: &str = "docker-registry";

impl TestDistribution {
    pub fn start() -> TestDistribution {
        let dir = tempfile::tempdir().expect("a temporary directory");
        TestDistribution::start_in(dir, None)
    }

    /// Start on `addr` (a restart on the same port), storage in `dir`.
    pub fn start_in(dir: tempfile::TempDir, addr: Option<SocketAddr>) -> TestDistribution {
        let addr = addr.unwrap_or_else(|| {
            // Take a free port; the registry binds it right after.
            let l = TcpListener::bind("127.0.0.1:0").expect("a free port");
            l.local_addr().expect("its address")
        });
        let config = dir.path().join("config.yml");
        let storage = dir.path().join("storage");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {addr}\n",
                storage.display()
            ),
        )
        .expect("the registry's config");
        let child = Command::new(BINARY)
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start `{BINARY}` ({e}): install the Debian package docker-registry (.ci/run does)")
            });
        let mut r = TestDistribution { child, addr, dir };
        r.wait_ready();
        r
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("`{BINARY}` exited at start: {status}");
            }
            if self.answers_v2() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "`{BINARY}` did not answer /v2/ on {} within 15 s",
            self.addr
        );
    }

    /// `GET /v2/` answers 200: the registry is up.
    fn answers_v2(&self) -> bool {
        let Ok(mut s) = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        let req = format!(
            "GET /v2/ HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.addr
        );
        if s.write_all(req.as_bytes()).is_err() {
            return false;
        }
        let mut head = [0u8; 12];
        s.read_exact(&mut head).is_ok() && &head[9..12] == b"200"
    }

    /// `host:port`, as references and --plain-http name it.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    /// Stop the registry (it "goes away"); returns its storage for a restart.
    pub fn stop(mut self) -> (tempfile::TempDir, SocketAddr) {
        self.kill();
        let addr = self.addr;
        // Move the directory out; Drop then only kills (already done).
        let dir = std::mem::replace(
            &mut self.dir,
            tempfile::tempdir().expect("a temporary directory"),
        );
        (dir, addr)
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for TestDistribution {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A file of conformance/signed/ (the signed tables and test keys).
pub fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/signed")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The public keys of a conformance/signed/ `.pub` file.
pub fn keys(name: &str) -> toolgate_runtime::TrustedKeys {
    let pem = String::from_utf8(fixture(name)).expect("PEM is text");
    toolgate_runtime::TrustedKeys::from_pem(&pem).expect("a public key")
}

/// The key every signed fixture trusts.
pub fn trusted() -> toolgate_runtime::TrustedKeys {
    keys("trusted.pub")
}
