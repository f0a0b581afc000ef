use super::*;

fn check(hosts: &[&str], origins: &[&str], same: bool) -> HostCheck {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    HostCheck::new(&s(hosts), &s(origins), same).expect("valid check")
}

fn ask(c: &HostCheck, uri: &str, headers: &[(&str, &str)]) -> Result<(), TransportError> {
    let mut h = HeaderMap::new();
    for (k, v) in headers {
        h.append(
            axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            HeaderValue::from_str(v).unwrap(),
        );
    }
    c.check(&uri.parse().unwrap(), &h)
}

#[test]
fn only_the_hosts_named_pass_with_any_port_or_the_one_named() {
    let c = check(
        &["localhost", "127.0.0.1", "::1", "gw.example:8443"],
        &[],
        false,
    );
    for host in [
        "127.0.0.1:8080",
        "localhost",
        "LOCALHOST:1",
        "[::1]:9",
        "gw.example:8443",
    ] {
        assert_eq!(ask(&c, "/mcp", &[("host", host)]), Ok(()), "{host}");
    }
    assert_eq!(
        ask(&c, "/metrics", &[("host", "gw.example:8444")]),
        Err(TransportError::HostNotAllowed("gw.example:8444".into()))
    );
    assert_eq!(
        ask(&c, "/ready", &[("host", "rebind.attacker.example")]),
        Err(TransportError::HostNotAllowed(
            "rebind.attacker.example".into()
        ))
    );
}

#[test]
fn malformed_hosts_and_requests_are_400() {
    let c = check(&["127.0.0.1"], &[], false);
    // A user-info part would otherwise be read as host 127.0.0.1.
    assert_eq!(
        ask(&c, "/health", &[("host", "evil.example@127.0.0.1:8080")]),
        Err(TransportError::MalformedHost(
            "evil.example@127.0.0.1:8080".into()
        ))
    );
    assert_eq!(
        ask(
            &c,
            "/health",
            &[("host", "127.0.0.1"), ("host", "127.0.0.1")]
        ),
        Err(TransportError::RepeatedHost)
    );
    assert_eq!(ask(&c, "/health", &[]), Err(TransportError::MissingHost));
    assert_eq!(
        ask(&c, "http://evil.example/mcp", &[("host", "127.0.0.1")]),
        Err(TransportError::AbsoluteForm)
    );
    for bad in ["127.0.0.1/x", "127.0.0.1:99999", ":80", "a b"] {
        assert!(
            matches!(
                ask(&c, "/", &[("host", bad)]),
                Err(TransportError::MalformedHost(_))
            ),
            "{bad}"
        );
    }
    assert_eq!(
        TransportError::RepeatedHost.status(),
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        TransportError::HostNotAllowed(String::new()).status(),
        StatusCode::FORBIDDEN
    );
}

#[test]
fn origins_pass_only_when_listed_or_the_requests_own() {
    let strict = check(&["127.0.0.1"], &["https://console.example/"], false);
    assert_eq!(ask(&strict, "/", &[("host", "127.0.0.1:1")]), Ok(()));
    assert_eq!(
        ask(
            &strict,
            "/",
            &[
                ("host", "127.0.0.1:1"),
                ("origin", "https://console.example")
            ]
        ),
        Ok(())
    );
    assert_eq!(
        ask(
            &strict,
            "/",
            &[("host", "127.0.0.1:1"), ("origin", "http://127.0.0.1:1")]
        ),
        Err(TransportError::OriginNotAllowed(
            "http://127.0.0.1:1".into()
        ))
    );
    let console = check(&["127.0.0.1"], &[], true);
    assert_eq!(
        ask(
            &console,
            "/",
            &[("host", "127.0.0.1:1"), ("origin", "http://127.0.0.1:1")]
        ),
        Ok(())
    );
    for o in ["http://127.0.0.1:2", "http://evil.example", "null"] {
        assert!(
            ask(&console, "/", &[("host", "127.0.0.1:1"), ("origin", o)]).is_err(),
            "{o}"
        );
    }
    assert_eq!(
        ask(
            &console,
            "/",
            &[
                ("host", "127.0.0.1:1"),
                ("origin", "http://127.0.0.1:1"),
                ("origin", "http://127.0.0.1:1")
            ]
        ),
        Err(TransportError::RepeatedOrigin)
    );
}

#[test]
fn a_configured_host_that_is_not_one_is_an_error() {
    assert!(HostCheck::new(&["a b".into()], &[], false).is_err());
    assert!(HostCheck::new(&["user@host".into()], &[], false).is_err());
    assert_eq!(
        HostCheck::defaults(
            Some("0.0.0.0".parse().unwrap()),
            Some("https://gw.example:8443/")
        ),
        ["127.0.0.1", "::1", "gw.example", "localhost"]
    );
    assert_eq!(
        HostCheck::defaults(Some("10.0.0.5".parse().unwrap()), None),
        ["10.0.0.5", "127.0.0.1", "::1", "localhost"]
    );
}
