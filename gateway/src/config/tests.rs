use super::*;

const BASE: &str = "configuration = \"c\"\ntable = \"t.tgt\"\nregistry = \"r.toml\"\n[identity]\nconsumer = \"bot\"\n[[upstream]]\nname = \"git\"\ncommand = [\"mcp-server-git\"]\n";

#[test]
fn a_plain_file_gives_loopback_pins_and_the_defaults() {
    let c = Config::from_toml(BASE, Path::new("/etc/gw")).expect("valid");
    assert_eq!(c.listen.to_string(), "127.0.0.1:8800");
    assert_eq!(c.source, TableSource::Table("/etc/gw/t.tgt".into()));
    assert_eq!(c.registry, Some("/etc/gw/r.toml".into()));
    assert_eq!(
        c.identity,
        IdentityMode::Fixed {
            consumer: Some("bot".into()),
            role: Role::User
        }
    );
    assert_eq!(c.limits, GatewayLimits::default());
    assert_eq!(c.allowed_hosts, ["localhost", "127.0.0.1", "::1"]);
    assert!(c.allowed_origins.is_empty());
}

#[test]
fn a_missing_identity_says_what_to_write() {
    let text = BASE.replace("[identity]\nconsumer = \"bot\"\n", "");
    let e = Config::from_toml(&text, Path::new(".")).unwrap_err();
    assert_eq!(e.message, "missing field `identity`");
    assert!(
        e.help.as_deref().is_some_and(|h| h.starts_with(
            "add `[identity]` with how callers are known: `auth = \"credentials.toml\"`"
        )),
        "{e:?}"
    );
}

#[test]
fn upstream_secrets_come_from_where_they_are_named_and_show_nowhere() {
    let dir = std::env::temp_dir().join(format!("tg-gw-secret-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("token"), "t0ken\n").unwrap();
    let text = format!(
        "{BASE}[[upstream]]\nname = \"hosted\"\nurl = \"https://mcp.example/mcp\"\nheaders = {{ Authorization = {{ file = \"token\", prefix = \"Bearer \" }}, X-Region = {{ value = \"eu\" }} }}\n"
    );
    let c = Config::from_toml(&text, &dir).expect("valid");
    let h = &c.upstreams[1].headers;
    assert_eq!(h[0].0, "Authorization");
    assert_eq!(h[0].1.expose(), "Bearer t0ken");
    assert_eq!(
        format!("{h:?}"),
        "[(\"Authorization\", Secret(<12 bytes>)), (\"X-Region\", Secret(<2 bytes>))]"
    );
    // Headers on a command, env on a URL, two sources, a reserved header.
    for (bad, said) in [
        (
            "command = [\"x\"]\nheaders = { A = { value = \"v\" } }",
            "`headers` are for a `url` upstream",
        ),
        (
            "url = \"http://h/mcp\"\nenv = { A = { value = \"v\" } }",
            "`env` and `cwd` are for a `command` upstream",
        ),
        (
            "url = \"http://h/mcp\"\nheaders = { A = { value = \"v\", env = \"E\" } }",
            "give exactly one of `value`, `env` and `file`",
        ),
        (
            "url = \"http://h/mcp\"\nheaders = { Mcp-Session-Id = { value = \"v\" } }",
            "is not a header the gateway may set",
        ),
        (
            "url = \"http://h/mcp\"\nheaders = { A = { env = \"TG_SURELY_UNSET_VAR\" } }",
            "the environment variable `TG_SURELY_UNSET_VAR` is not set",
        ),
    ] {
        let text = format!("{BASE}[[upstream]]\nname = \"x\"\n{bad}\n");
        let e = Config::from_toml(&text, &dir).unwrap_err();
        assert!(e.message.contains(said), "{bad}: {}", e.message);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn what_would_open_access_is_an_error_with_a_place_and_a_fix() {
    let e =
        Config::from_toml(&format!("lisen = \"0.0.0.0:1\"\n{BASE}"), Path::new(".")).unwrap_err();
    assert_eq!(e.at, Some((1, 1)));
    assert_eq!(e.help.as_deref(), Some("did you mean `listen`?"));
    assert!(
        e.message.starts_with("unknown field `lisen`"),
        "{}",
        e.message
    );
    let e = Config::from_toml(
        &format!("listen = \"0.0.0.0:8800\"\n{BASE}"),
        Path::new("."),
    )
    .unwrap_err();
    assert_eq!(
        e.message,
        "refusing to listen on 0.0.0.0:8800: not a loopback address, and nothing authenticates the clients"
    );
    let e = Config::from_toml(&BASE.replace("registry = \"r.toml\"\n", ""), Path::new("."))
        .unwrap_err();
    assert_eq!(
        e.message,
        "tool definitions are pinned, and no `registry` says what they were when reviewed"
    );
    let e = Config::from_toml(&BASE.replace("\"git\"", "\"git.hub\""), Path::new(".")).unwrap_err();
    assert_eq!(
        e.message,
        "upstream name `git.hub` is not valid: it contains `.`, outside [a-zA-Z0-9_-]"
    );
    let e = Config::from_toml(
        &BASE.replace(
            "consumer = \"bot\"",
            "consumer = \"bot\"\nauth = \"a.toml\"",
        ),
        Path::new("."),
    )
    .unwrap_err();
    assert_eq!(
        e.message,
        "`[identity]` takes one of `auth`, `trusted-header`, or `consumer`/`role`"
    );
    let header = BASE.replace(
        "consumer = \"bot\"",
        "[identity.trusted-header]\nconsumer = \"X-Consumer\"",
    );
    let e = Config::from_toml(&header, Path::new(".")).unwrap_err();
    assert_eq!(
        e.message,
        "a trusted header must say what it is trusted from: `from` (the proxy's addresses) or `secret-sha256`"
    );
    let ok = Config::from_toml(
        &header.replace("\"X-Consumer\"", "\"X-Consumer\"\nfrom = [\"10.0.0.7\"]"),
        Path::new("."),
    )
    .expect("valid");
    let IdentityMode::Header(h) = ok.identity else {
        panic!("a header identity")
    };
    assert_eq!((h.consumer.as_str(), h.from.len()), ("x-consumer", 1));
}

// ---- the documented configurations
/// Every TOML example of docs/gateway.md that is a whole file (it
/// names `configuration` and an upstream; a credentials file's key may
/// name a configuration too) is a valid configuration.
#[test]
fn the_documented_configurations_are_valid() {
    let doc = include_str!("../../../docs/gateway.md");
    let mut checked = 0;
    for block in doc.split("```toml\n").skip(1) {
        let text = block.split("```").next().unwrap_or_default();
        if !(text.contains("configuration = ") && text.contains("[[upstream]]")) {
            continue;
        }
        Config::from_toml(text, std::path::Path::new("/srv"))
            .unwrap_or_else(|e| panic!("{}\n{text}", e.render(std::path::Path::new("docs"))));
        checked += 1;
    }
    assert_eq!(checked, 1);
}

// ---- the keys of "did you mean", from the schema

#[test]
fn the_keys_a_misspelt_one_is_matched_against_are_the_schemas() {
    let mut want = vec![
        "listen",
        "public-url",
        "table",
        "project",
        "oci",
        "trusted-keys",
        "configuration",
        "configurations",
        "registry",
        "pin-definitions",
        "stealth",
        "allowed-hosts",
        "allowed-origins",
        "decision-log",
        "identity",
        "limits",
        "upstream",
        "auth",
        "consumer",
        "role",
        "trusted-header",
        "from",
        "secret-sha256",
        "secret-header",
        "max-pages",
        "max-tools",
        "upstream-timeout-ms",
        "max-body-bytes",
        "max-result-bytes",
        "headers",
        "env",
        "cwd",
        "value",
        "file",
        "prefix",
        "list-page-size",
        "max-connections",
        "header-timeout-ms",
        "relist-interval-ms",
        "session-idle-ms",
        "name",
        "command",
        "url",
        "keep-alive",
        "protocol",
        "approvals",
        "ask-caller",
        "expiry-seconds",
        "max-pending",
        "signing-key",
        "telemetry",
        "endpoint",
        "service-name",
        "true-names",
        "record-arguments",
    ];
    want.sort();
    assert_eq!(file::keys(), want);
    let e = Config::from_toml(
        &BASE.replace("[identity]", "stealht = true\n[identity]"),
        Path::new("/"),
    )
    .unwrap_err();
    assert_eq!(e.help.as_deref(), Some("did you mean `stealth`?"));
}

#[test]
fn approvals_take_their_defaults_and_refuse_what_would_let_no_call_wait() {
    let c = Config::from_toml(BASE, Path::new("/")).unwrap();
    assert_eq!(c.approvals, super::ApprovalSettings::default());
    assert_eq!(
        (
            c.approvals.ask_caller,
            c.approvals.expiry.as_secs(),
            c.approvals.max_pending
        ),
        (true, 600, 1024)
    );
    let with =
        |text: &str| Config::from_toml(&format!("{BASE}\n[approvals]\n{text}\n"), Path::new("/d"));
    let c = with("ask-caller = false\nexpiry-seconds = 60\nsigning-key = \"k.pem\"").unwrap();
    assert_eq!(
        (
            c.approvals.ask_caller,
            c.approvals.expiry.as_secs(),
            c.approvals.signing_key
        ),
        (false, 60, Some(Path::new("/d/k.pem").to_path_buf()))
    );
    for (text, message) in [
        ("expiry-seconds = 0", "[approvals] expiry-seconds = 0: a question and a grant last from 1 second to a day"),
        ("expiry-seconds = 86401", "[approvals] expiry-seconds = 86401: a question and a grant last from 1 second to a day"),
        ("max-pending = 0", "[approvals] max-pending = 0: no call that needs approval could wait for an approver"),
    ] {
        assert_eq!(with(text).unwrap_err().message, message, "{text}");
    }
    let e = with("ask-callers = true").unwrap_err();
    assert_eq!(e.help.as_deref(), Some("did you mean `ask-caller`?"));
}

#[test]
fn telemetry_is_off_until_an_endpoint_says_where_and_refuses_what_it_cannot_speak() {
    // The test process sets no OTEL_* variable.
    let c = Config::from_toml(BASE, Path::new("/")).unwrap();
    assert!(!c.telemetry.enabled);
    assert_eq!(c.telemetry.service_name, "toolgate-gateway");
    let with =
        |text: &str| Config::from_toml(&format!("{BASE}\n[telemetry]\n{text}\n"), Path::new("/d"));
    let c = with("endpoint = \"http://127.0.0.1:4317\"\nprotocol = \"grpc\"\ntrue-names = true")
        .unwrap();
    assert_eq!(
        (
            c.telemetry.enabled,
            c.telemetry.endpoint.as_deref(),
            c.telemetry.protocol,
            c.telemetry.true_names,
            c.telemetry.record_arguments
        ),
        (
            true,
            Some("http://127.0.0.1:4317"),
            toolgate_service::telemetry::OtlpProtocol::Grpc,
            true,
            false
        )
    );
    for (text, message) in [
        ("endpoint = \"127.0.0.1:4318\"", "[telemetry] endpoint `127.0.0.1:4318` is not an http:// or https:// URL"),
        ("protocol = \"http/json\"", "[telemetry] protocol: OTLP protocol `http/json` is not supported: use `http/protobuf` or `grpc`"),
    ] {
        assert_eq!(with(text).unwrap_err().message, message, "{text}");
    }
    let e = with("true-name = true").unwrap_err();
    assert_eq!(e.help.as_deref(), Some("did you mean `true-names`?"));
}
