//! `toolgate lsp` driven as an editor drives it: the binary spawned, JSON-RPC
//! over its standard input and output (`Content-Length` framing),
//! `initialize`, `didOpen`, `didChange`, then requests whose exact answers
//! are asserted, on the example projects under `policies/`.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

const TIMEOUT: Duration = Duration::from_secs(30);

struct Client {
    child: Child,
    stdin: ChildStdin,
    inbox: Receiver<Value>,
    /// Notifications read while waiting for something else.
    pending: VecDeque<Value>,
    next_id: i64,
}

fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

impl Client {
    fn start(root: &Path) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("toolgate lsp");
        let stdin = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (tx, inbox) = mpsc::channel();
        std::thread::spawn(move || {
            while let Some(m) = read_message(&mut stdout) {
                if tx.send(m).is_err() {
                    break;
                }
            }
        });
        let mut c = Client {
            child,
            stdin,
            inbox,
            pending: VecDeque::new(),
            next_id: 1,
        };
        let init = c.request(
            "initialize",
            json!({"processId": null, "rootUri": uri(root), "capabilities": {}}),
        );
        let caps = &init["capabilities"];
        for cap in [
            "hoverProvider",
            "definitionProvider",
            "referencesProvider",
            "renameProvider",
            "documentFormattingProvider",
            "documentSymbolProvider",
            "codeActionProvider",
        ] {
            assert_eq!(caps[cap], json!(true), "{cap}");
        }
        assert_eq!(caps["textDocumentSync"], json!(1));
        assert_eq!(init["serverInfo"]["name"], json!("toolgate"));
        c.notify("initialized", json!({}));
        c
    }

    fn send(&mut self, v: Value) {
        let body = v.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        self.stdin.flush().expect("flush");
    }

    fn recv(&mut self) -> Value {
        self.inbox
            .recv_timeout(TIMEOUT)
            .expect("the server answers within the timeout")
    }

    /// The whole answer to a request (`result` or `error`).
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.recv();
            if m["id"] == json!(id) {
                return m;
            }
            self.pending.push_back(m);
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let m = self.call(method, params);
        assert!(m.get("error").is_none(), "{method}: {m}");
        m["result"].clone()
    }

    /// The error of a request that must fail.
    fn request_error(&mut self, method: &str, params: Value) -> Value {
        self.call(method, params)["error"].clone()
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next diagnostics published for a document.
    fn diagnostics(&mut self, uri: &str) -> Value {
        loop {
            let m = match self.pending.iter().position(|m| {
                m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
            }) {
                Some(i) => self.pending.remove(i).expect("pending"),
                None => {
                    let m = self.recv();
                    if m["method"] != "textDocument/publishDiagnostics" || m["params"]["uri"] != uri
                    {
                        self.pending.push_back(m);
                        continue;
                    }
                    m
                }
            };
            return m["params"]["diagnostics"].clone();
        }
    }

    fn open(&mut self, path: &Path, text: &str) -> Value {
        let u = uri(path);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": u, "languageId": "toolgate", "version": 1, "text": text}}),
        );
        self.diagnostics(&u)
    }

    fn change(&mut self, path: &Path, version: i64, text: &str) -> Value {
        let u = uri(path);
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": u, "version": version}, "contentChanges": [{"text": text}]}),
        );
        self.diagnostics(&u)
    }

    /// Bytes written as they are, framed or not.
    fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).expect("write");
        self.stdin.flush().expect("flush");
    }

    /// The next error answer with a null id (a frame that was no message).
    fn null_id_error(&mut self) -> Value {
        let hit = |m: &Value| m["id"] == Value::Null && m.get("error").is_some();
        if let Some(i) = self.pending.iter().position(hit) {
            return self.pending.remove(i).expect("pending")["error"].clone();
        }
        loop {
            let m = self.recv();
            if hit(&m) {
                return m["error"].clone();
            }
            self.pending.push_back(m);
        }
    }

    /// The answer with this id, however it was asked for.
    fn answer(&mut self, id: i64) -> Value {
        if let Some(i) = self.pending.iter().position(|m| m["id"] == json!(id)) {
            return self.pending.remove(i).expect("pending");
        }
        loop {
            let m = self.recv();
            if m["id"] == json!(id) {
                return m;
            }
            self.pending.push_back(m);
        }
    }

    /// The most memory the server has held (VmHWM), in KiB.
    fn peak_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmHWM")
    }

    /// Close standard input and wait (bounded) for the server to end.
    fn end_input(mut self) -> std::process::ExitStatus {
        drop(self.stdin);
        for _ in 0..100 {
            if let Some(s) = self.child.try_wait().expect("wait") {
                return s;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        panic!("the server did not end within 10 s of its input closing");
    }

    fn shutdown(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let status = self.child.wait().expect("exit");
        assert!(status.success(), "{status}");
    }
}

fn project(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../policies")
        .join(name);
    std::fs::canonicalize(p).expect("example project")
}

/// A server started on an example project, and one of its files with its text.
fn session(name: &str, file: &str) -> (PathBuf, PathBuf, String, Client) {
    let root = project(name);
    let path = root.join(file);
    let text = std::fs::read_to_string(&path).expect("example file");
    let c = Client::start(&root);
    (root, path, text, c)
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

fn pos(text: &str, needle: &str) -> Value {
    let at = text.find(needle).expect("needle in text");
    let line = text[..at].matches('\n').count();
    let col = at - text[..at].rfind('\n').map(|i| i + 1).unwrap_or(0);
    json!({"line": line, "character": col})
}

fn at(path: &Path, text: &str, needle: &str) -> Value {
    json!({"textDocument": {"uri": uri(path)}, "position": pos(text, needle)})
}

fn labels(items: &Value) -> Vec<String> {
    let mut v: Vec<String> = items
        .as_array()
        .expect("a list")
        .iter()
        .map(|i| i["label"].as_str().unwrap_or_default().to_string())
        .collect();
    v.sort();
    v
}

/// Apply LSP text edits (on one document) to a text.
fn apply(text: &str, edits: &Value) -> String {
    let offset = |p: &Value| {
        let line = p["line"].as_u64().unwrap_or(0) as usize;
        let ch = p["character"].as_u64().unwrap_or(0) as usize;
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        start + ch
    };
    let mut edits: Vec<&Value> = edits.as_array().expect("edits").iter().collect();
    edits.sort_by_key(|e| std::cmp::Reverse(offset(&e["range"]["start"])));
    let mut out = text.to_string();
    for e in edits {
        let (a, b) = (offset(&e["range"]["start"]), offset(&e["range"]["end"]));
        out.replace_range(a..b, e["newText"].as_str().unwrap_or_default());
    }
    out
}

fn range(l1: u64, c1: u64, l2: u64, c2: u64) -> Value {
    json!({"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}})
}

fn actions(c: &mut Client, path: &Path, diags: &Value) -> Value {
    c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri(path)}, "range": diags[0]["range"], "context": {"diagnostics": diags}}),
    )
}

#[test]
fn a_typo_in_an_exclusion_gets_its_code_span_and_a_quick_fix_that_writes_the_right_name() {
    let (_root, conf, text, mut c) = session("exclusions", "configurations.tg");
    assert_eq!(c.open(&conf, &text), json!([]));

    let typo = text.replace("exclude [delete_record]", "exclude [delete_recrod]");
    let d = c.change(&conf, 2, &typo);
    assert_eq!(
        d,
        json!([{
            "range": range(13, 11, 13, 24),
            "severity": 1,
            "code": "TG1010",
            "codeDescription": {"href": "https://github.com/toolgate/toolgate/blob/main/docs/diagnostics.md#tg1010-exclusion-typo"},
            "source": "toolgate",
            "message": "excluded tool `delete_recrod` is not registered; did you mean `delete_record`?\nhelp: as written, configuration `editor-chat` still offers `delete_record`; write `delete_record`, or, if `delete_recrod` is kept on purpose (a tool renamed in the registry), acknowledge it with `# toolgate: allow TG1010`",
        }])
    );
    let a = actions(&mut c, &conf, &d);
    assert_eq!(a.as_array().map(Vec::len), Some(1));
    assert_eq!(a[0]["title"], "Replace with `delete_record`");
    assert_eq!(a[0]["kind"], "quickfix");
    assert_eq!(a[0]["diagnostics"], d);
    let edits = &a[0]["edit"]["changes"][uri(&conf)];
    assert_eq!(
        edits,
        &json!([{"range": range(13, 11, 13, 24), "newText": "delete_record"}])
    );
    let fixed = apply(&typo, edits);
    assert_eq!(fixed, text);
    assert_eq!(c.change(&conf, 3, &fixed), json!([]));

    // A stale exclusion: a warning, and a fix that takes it out of the list.
    let stale = text.replace(
        "exclude [delete_record]",
        "exclude [delete_record, retired_tool]",
    );
    let d = c.change(&conf, 4, &stale);
    assert_eq!(d.as_array().map(Vec::len), Some(1));
    assert_eq!(d[0]["code"], "TG1009");
    assert_eq!(d[0]["severity"], 2);
    assert_eq!(d[0]["range"], range(13, 26, 13, 38));
    let a = actions(&mut c, &conf, &d);
    assert_eq!(a[0]["title"], "Remove `retired_tool`");
    let edits = &a[0]["edit"]["changes"][uri(&conf)];
    assert_eq!(
        edits,
        &json!([{"range": range(13, 24, 13, 38), "newText": ""}])
    );
    assert_eq!(apply(&stale, edits), text);
    c.shutdown();
}

#[test]
fn diagnostics_cover_the_whole_project_with_related_locations_in_other_files() {
    let (root, conf, text, mut c) = session("exclusions", "configurations.tg");
    let zones = root.join("zones.tg");
    assert_eq!(c.open(&conf, &text), json!([]));
    // A provider defined again here, first defined in zones.tg.
    let twice = format!("{text}provider claude-eu {{ zone local }}\n");
    let d = c.change(&conf, 2, &twice);
    assert_eq!(
        d,
        json!([{
            "range": range(50, 9, 50, 18),
            "severity": 1,
            "code": "TG2001",
            "codeDescription": {"href": "https://github.com/toolgate/toolgate/blob/main/docs/diagnostics.md#tg2001-duplicate-definition"},
            "source": "toolgate",
            "message": "provider `claude-eu` is defined twice\nhelp: merge the two `provider` blocks into one",
            "relatedInformation": [{
                "location": {"uri": uri(&zones), "range": range(21, 9, 21, 18)},
                "message": "first defined here",
            }],
        }])
    );
    // A finding in the other file, from an edit of this one: the unsaved
    // text is what is compiled.
    let unknown = text.replace("provider ollama-box", "provider olama-box");
    c.change(&conf, 3, &unknown);
    let z = c.diagnostics(&uri(&zones));
    assert_eq!(z, json!([]));
    c.shutdown();
}

#[test]
fn completion_offers_keywords_and_names_by_kind() {
    let (root, conf, text, mut c) = session("exclusions", "configurations.tg");
    c.open(&conf, &text);
    let complete = |c: &mut Client, text: &str, needle: &str, back: u64| {
        let mut p = pos(text, needle);
        p["character"] = json!(p["character"].as_u64().unwrap_or(0) + needle.len() as u64 - back);
        labels(&c.request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri(&conf)}, "position": p}),
        ))
    };
    let edited = text.replace(
        "exclude [delete_record]",
        "exclude [delete_record, ]\n  groups []\n  skills []\n  \n  provider \n",
    );
    c.change(&conf, 2, &edited);
    let tools = complete(&mut c, &edited, "delete_record, ]", 1);
    assert_eq!(tools.len(), 27);
    assert!(
        tools.contains(&"delete_record".to_string()) && tools.contains(&"flush_cache".to_string())
    );
    assert_eq!(
        complete(&mut c, &edited, "provider \n", 1),
        ["claude-eu", "ollama-box"]
    );
    assert_eq!(
        complete(&mut c, &edited, "groups []", 1),
        ["content", "editing", "skills", "system"]
    );
    assert_eq!(
        complete(&mut c, &edited, "skills []", 1),
        ["page-translation"]
    );
    assert_eq!(
        complete(&mut c, &edited, "skills []\n  \n", 1),
        ["exclude", "groups", "needs-approval", "provider", "skills"]
    );
    let top = complete(&mut c, &edited, "configuration reviewer-chat", 27);
    assert_eq!(top.len(), 15);
    assert!(
        top.contains(&"configuration".to_string())
            && top.contains(&"consumers-without-profile".to_string())
    );
    // Zones after `zone`, classes after `ceiling`, in the other file.
    let zones = root.join("zones.tg");
    let ztext = std::fs::read_to_string(&zones).unwrap();
    let zedit = ztext.replace(
        "provider ollama-box { zone local }",
        "provider ollama-box { zone l }\nzone x { ceiling s }",
    );
    c.open(&zones, &zedit);
    let zc = |c: &mut Client, needle: &str| {
        labels(&c.request("textDocument/completion", at(&zones, &zedit, needle)))
    };
    assert_eq!(zc(&mut c, "l }"), ["externalEu", "local", "x"]);
    assert_eq!(
        zc(&mut c, "s }"),
        [
            "editorContent",
            "internalConfiguration",
            "publicContent",
            "secretAdjacent",
            "sourceCode",
            "systemDiagnostics"
        ]
    );
    c.shutdown();
}

#[test]
fn mcp_profiles_complete_prefixes_servers_and_profiles() {
    let (_root, policy, text, mut c) = session("mcp-profiles", "policy.tg");
    assert_eq!(c.open(&policy, &text), json!([]));
    let edited =
        format!("{text}\nprofile probe {{ allow [server , ] }}\nconsumer probe {{ profile  }}\n");
    c.change(&policy, 2, &edited);
    let at_end = |needle: &str, back: usize| {
        let mut p = pos(&edited, needle);
        p["character"] = json!(p["character"].as_u64().unwrap_or(0) as usize + needle.len() - back);
        json!({"textDocument": {"uri": uri(&policy)}, "position": p})
    };
    let servers = labels(&c.request("textDocument/completion", at_end("[server ,", 1)));
    assert_eq!(servers, ["billing", "crm"]);
    let selectors = labels(&c.request("textDocument/completion", at_end("[server , ]", 1)));
    assert_eq!(
        selectors,
        [
            "get_help_article",
            "group",
            "mcp_billing_*",
            "mcp_billing_invoice_get",
            "mcp_billing_invoice_list",
            "mcp_billing_refund_status",
            "mcp_crm_*",
            "mcp_crm_case_create",
            "mcp_crm_contact_delete",
            "mcp_crm_customer-360_contacts",
            "mcp_crm_customer-360_lookup",
            "mcp_crm_customer-360_timeline",
            "payment.status",
            "refund.issue",
            "search_help_center",
            "server",
        ]
    );
    let profiles = labels(&c.request("textDocument/completion", at_end("profile  }", 2)));
    // `allow [server , ]` does not parse: the names are the last parse's,
    // which did not have `probe` yet.
    assert_eq!(profiles, ["billing-agent", "support-readonly"]);
    c.shutdown();
}

#[test]
fn hover_definition_references_and_rename_across_files() {
    let (root, conf, text, mut c) = session("exclusions", "configurations.tg");
    let zones = root.join("zones.tg");
    let registry = root.join("registry.toml");
    c.open(&conf, &text);

    let h = c.request("textDocument/hover", at(&conf, &text, "delete_record]"));
    assert_eq!(h["range"], range(13, 11, 13, 24));
    assert_eq!(
        h["contents"]["value"],
        "**tool** `delete_record`\n\n\
         registry: group `editing`, builtin, enabled by default, not admin-only, class not set\n\n\
         Delete a record (pages, content elements or records of an editable table).\n\n\
         compiled: enabled, not admin-only, class `editorContent`\n\n\
         | configuration | user | admin |\n| --- | --- | --- |\n\
         | `editor-chat` | refused: `configurationExcluded`, excluded by this configuration | refused: `configurationExcluded`, excluded by this configuration |\n\
         | `reviewer-chat` | offered | offered |\n\
         | `intern-chat` | refused: `configurationExcluded`, excluded by this configuration | refused: `configurationExcluded`, excluded by this configuration |\n\
         | `translator-chat` | refused: `configurationGroup`, not among the tools this configuration allows | refused: `configurationGroup`, not among the tools this configuration allows |\n"
    );
    let h = c.request("textDocument/hover", at(&conf, &text, "editor-chat"));
    assert_eq!(
        h["contents"]["value"],
        "**configuration** `editor-chat`\n\nprovider `claude-eu`, effective zone `externalEu` (ceiling `internalConfiguration`)\n\noffers 25 of 27 tools to users, 25 to admins\n"
    );

    assert_eq!(
        c.request("textDocument/definition", at(&conf, &text, "claude-eu")),
        json!([{"uri": uri(&zones), "range": range(21, 9, 21, 18)}])
    );
    assert_eq!(
        c.request(
            "textDocument/definition",
            at(&conf, &text, "delete_record]")
        ),
        json!([{"uri": uri(&registry), "range": range(108, 7, 108, 22)}])
    );
    let refs = c.request(
        "textDocument/references",
        json!({"textDocument": {"uri": uri(&conf)}, "position": pos(&text, "claude-eu"), "context": {"includeDeclaration": false}}),
    );
    assert_eq!(
        refs,
        json!([
            {"uri": uri(&conf), "range": range(11, 11, 11, 20)},
            {"uri": uri(&conf), "range": range(20, 11, 20, 20)},
            {"uri": uri(&conf), "range": range(28, 11, 28, 20)},
        ])
    );
    let edit = c.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": uri(&conf)}, "position": pos(&text, "claude-eu"), "newName": "claude-europe"}),
    );
    let renamed = apply(&text, &edit["changes"][uri(&conf)]);
    assert_eq!(renamed, text.replace("claude-eu", "claude-europe"));
    let ztext = std::fs::read_to_string(&zones).unwrap();
    assert_eq!(
        apply(&ztext, &edit["changes"][uri(&zones)]),
        ztext.replace("provider claude-eu", "provider claude-europe")
    );
    // A registry tool is not the policy's to rename.
    let err = c.request_error(
        "textDocument/rename",
        json!({"textDocument": {"uri": uri(&conf)}, "position": pos(&text, "delete_record]"), "newName": "x"}),
    );
    assert_eq!(
        err["message"],
        "a tool is not defined by the policy and cannot be renamed here"
    );
    c.shutdown();
}

#[test]
fn while_the_text_does_not_parse_the_error_is_shown_and_the_last_good_model_answers() {
    let (root, conf, text, mut c) = session("exclusions", "configurations.tg");
    c.open(&conf, &text);
    let broken = text.replace(
        "exclude [delete_record]",
        "exclude [delete_record, ]\n  provider ",
    );
    let d = c.change(&conf, 2, &broken);
    assert_eq!(d.as_array().map(Vec::len), Some(1));
    assert_eq!(d[0]["code"], "TG0001");
    assert_eq!(d[0]["range"], range(15, 0, 15, 1));
    assert_eq!(
        d[0]["message"],
        "expected a name, found `}`\nhelp: see grammar/README.md for the statements and properties the language has"
    );
    let h = c.request("textDocument/hover", at(&conf, &broken, "load_skill]"));
    let v = h["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        v.starts_with("**tool** `load_skill`\n\nregistry: group `skills`"),
        "{v}"
    );
    assert!(
        v.contains("| `intern-chat` | refused: `configurationExcluded`"),
        "{v}"
    );
    assert_eq!(
        c.request("textDocument/definition", at(&conf, &broken, "ollama-box")),
        json!([{"uri": uri(&root.join("zones.tg")), "range": range(22, 9, 22, 19)}])
    );
    let symbols = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri(&conf)}}),
    );
    let names: Vec<&str> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        names,
        [
            "editor-chat",
            "reviewer-chat",
            "intern-chat",
            "page-translation",
            "translator-chat"
        ]
    );
    c.shutdown();
}

#[test]
fn formatting_uses_the_formatter_and_symbols_outline_the_file() {
    let (_root, policy, text, mut c) = session("trust-zones", "policy.tg");
    c.open(&policy, &text);
    let req = json!({"textDocument": {"uri": uri(&policy)}, "options": {"tabSize": 2, "insertSpaces": true}});
    assert_eq!(c.request("textDocument/formatting", req.clone()), json!([]));
    let messy = text
        .replace(
            "zone local { ceiling secretAdjacent }",
            "zone   local {\n ceiling    secretAdjacent\n}",
        )
        .replace(
            "configuration eu-chat { provider mistral-eu }",
            "configuration eu-chat{provider mistral-eu}",
        );
    assert_ne!(messy, text);
    c.change(&policy, 2, &messy);
    let edits = c.request("textDocument/formatting", req);
    assert_eq!(apply(&messy, &edits), text);
    let symbols = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri(&policy)}}),
    );
    let outline: Vec<String> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{} {}",
                s["detail"].as_str().unwrap_or_default(),
                s["name"].as_str().unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(outline.len(), 28);
    assert_eq!(
        outline[..3],
        ["classes classes", "zone local", "zone privateHosted"]
    );
    assert_eq!(outline[27], "configuration private-failover-chat");
    c.shutdown();
}

fn framed(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

#[test]
fn a_frame_over_the_cap_is_answered_at_once_and_costs_no_memory() {
    for (length, peak_limit_kib) in [
        ("1000000000", 150 * 1024),
        ("4611686018427387904", 150 * 1024),
    ] {
        let (_root, policy, text, mut c) = session("trust-zones", "policy.tg");
        c.open(&policy, &text);
        c.send_raw(format!("Content-Length: {length}\r\n\r\n{{").as_bytes());
        let e = c.null_id_error();
        assert_eq!(
            e,
            json!({"code": -32700, "message": format!("a frame of {length} bytes is over the 64 MiB limit; its body is skipped")})
        );
        // Still running, and it did not make room for the declared body.
        assert!(
            c.child.try_wait().expect("wait").is_none(),
            "{length}: the server ended"
        );
        let peak = c.peak_kib();
        assert!(peak < peak_limit_kib, "{length}: peak {peak} KiB");
        // Its input ends inside the skipped body: the server ends cleanly.
        let status = c.end_input();
        assert!(status.success(), "{length}: {status}");
    }
}

#[test]
fn malformed_frames_are_answered_and_the_open_documents_survive() {
    let (_root, policy, text, mut c) = session("trust-zones", "policy.tg");
    let messy = text.replace(
        "zone local { ceiling secretAdjacent }",
        "zone   local {ceiling secretAdjacent}",
    );
    assert_ne!(messy, text);
    c.open(&policy, &messy);
    let formatting = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/formatting",
               "params": {"textDocument": {"uri": uri(&policy)}, "options": {"tabSize": 2, "insertSpaces": true}}})
        .to_string()
    };
    // Not JSON, not UTF-8, and JSON that is no message.
    c.send_raw(&framed("{not json"));
    assert_eq!(
        c.null_id_error(),
        json!({"code": -32700, "message": "the frame's body is not JSON: key must be a string at line 1 column 2"})
    );
    c.send_raw(b"Content-Length: 3\r\n\r\n\xff\xfe\xfd");
    assert_eq!(
        c.null_id_error(),
        json!({"code": -32700, "message": "the frame's body is not UTF-8"})
    );
    // An id over i32, which lsp-server's ids cannot hold: refused with that id.
    c.send_raw(&framed(
        r#"{"jsonrpc": "2.0", "id": 4294967296, "method": "textDocument/hover"}"#,
    ));
    let m = c.answer(4294967296);
    assert_eq!(
        m["error"],
        json!({"code": -32600, "message": "request id 4294967296 is out of range: ids are strings or 32-bit integers"})
    );
    // A length that is not a number: the reader skips to the next frame.
    let mut bytes = b"Content-Length: twelve\r\n\r\n{\"id\": 1}".to_vec();
    bytes.extend(framed(&formatting(701)));
    c.send_raw(&bytes);
    assert_eq!(
        c.null_id_error(),
        json!({"code": -32700, "message": "malformed frame header: `Content-Length: twelve` is not a number of bytes; skipped to the next `Content-Length` header"})
    );
    let m = c.answer(701);
    assert_eq!(apply(&messy, &m["result"]), text, "{m}");
    // Headers ended by LF alone are read as CRLF.
    let body = formatting(702);
    c.send_raw(format!("Content-Length: {}\n\n{body}", body.len()).as_bytes());
    let m = c.answer(702);
    assert_eq!(apply(&messy, &m["result"]), text, "{m}");
    // The document is still open with the client's text.
    let req = json!({"textDocument": {"uri": uri(&policy)}, "options": {"tabSize": 2, "insertSpaces": true}});
    assert_eq!(
        apply(&messy, &c.request("textDocument/formatting", req)),
        text
    );
    c.shutdown();
}

#[test]
fn a_file_outside_the_workspace_projects_is_never_read() {
    let outside = std::env::temp_dir().join(format!("toolgate-lsp-outside-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&outside);
    std::fs::create_dir_all(&outside).unwrap();
    let lone = outside.join("secret.tg");
    std::fs::write(&lone, "zone   local {ceiling secretAdjacent}\n").unwrap();
    let (_root, policy, text, mut c) = session("trust-zones", "policy.tg");
    c.open(&policy, &text);
    let doc = json!({"textDocument": {"uri": uri(&lone)}, "options": {"tabSize": 2, "insertSpaces": true}});
    assert_eq!(c.request("textDocument/formatting", doc), Value::Null);
    assert_eq!(
        c.request(
            "textDocument/hover",
            at(&lone, "zone   local {ceiling secretAdjacent}\n", "local")
        ),
        Value::Null
    );
    assert_eq!(
        c.request(
            "textDocument/completion",
            at(&lone, "zone   local {ceiling secretAdjacent}\n", "ceiling")
        ),
        Value::Null
    );
    // Opened by the client, the same file is formatted.
    c.open(&lone, "zone   local {ceiling secretAdjacent}\n");
    let doc = json!({"textDocument": {"uri": uri(&lone)}, "options": {"tabSize": 2, "insertSpaces": true}});
    let edits = c.request("textDocument/formatting", doc);
    assert_eq!(
        apply("zone   local {ceiling secretAdjacent}\n", &edits),
        "zone local { ceiling secretAdjacent }\n"
    );
    c.shutdown();
    let _ = std::fs::remove_dir_all(&outside);
}

#[test]
fn a_registry_name_written_with_an_escape_gets_its_diagnostic_on_its_own_line() {
    let dir = std::env::temp_dir().join(format!("toolgate-lsp-escape-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let registry = "[[tool]]\nname = \"get_page_content\"\ngroup = \"content\"\n\n[[tool]]\nname = \"g\\u0435t_page_content\"\ngroup = \"content\"\n";
    std::fs::write(
        dir.join("toolgate.toml"),
        "registry = \"registry.toml\"\npolicies = [\"policy.tg\"]\n",
    )
    .unwrap();
    std::fs::write(dir.join("registry.toml"), registry).unwrap();
    std::fs::write(dir.join("policy.tg"), "").unwrap();
    let dir = std::fs::canonicalize(&dir).unwrap();
    // `toolgate check`: line 6, the escaped name's own line.
    let o = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .args(["check", "--format", "plain", "."])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        out.contains("error[TG4004]: registry tools `get_page_content` and `g\u{435}t_page_content` read alike\n  ┌─ registry.toml:6:8\n"),
        "{out}"
    );
    // The language server: the same range.
    let mut c = Client::start(&dir);
    c.open(&dir.join("policy.tg"), "");
    let diags = c.diagnostics(&uri(&dir.join("registry.toml")));
    let tg4004: Vec<&Value> = diags
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "TG4004")
        .collect();
    assert_eq!(tg4004.len(), 1, "{diags}");
    assert_eq!(tg4004[0]["range"], range(5, 7, 5, 30));
    c.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 45: the `lsp_frames` fuzz input after `initialize` and
/// `initialized`, then the end of standard input. The server read a
/// `Content-Length:` found by a resync, met the end of the stream, and
/// answered "the stream ended inside a header" forever (31.9 MB in 5 s).
/// It must end, soon, having written a few frames.
#[test]
fn the_end_of_input_after_a_skipped_header_ends_the_server_with_bounded_output() {
    use std::io::Read;
    let seed = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fuzz/seeds/lsp_frames/issue45_eof_after_resync.bin"),
    )
    .expect("the regression seed");
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolgate lsp");
    // Counted as they come, kept only up to the bound, so a server that
    // never stops writing cannot fill the test's memory.
    const BOUND: usize = 16 * 1024;
    let counter = |stream: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let (mut total, mut kept, mut buf) = (0usize, Vec::new(), [0u8; 8192]);
            let mut stream = stream;
            while let Ok(n) = stream.read(&mut buf) {
                if n == 0 {
                    break;
                }
                total += n;
                if kept.len() < BOUND {
                    kept.extend_from_slice(&buf[..n]);
                }
            }
            (total, kept)
        })
    };
    let stdout = counter(Box::new(child.stdout.take().expect("stdout")));
    let stderr = counter(Box::new(child.stderr.take().expect("stderr")));
    let mut input =
        framed(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}"#);
    input.extend(framed(
        r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
    ));
    input.extend_from_slice(&seed);
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(&input).expect("write");
    drop(stdin);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (out_bytes, out) = stdout.join().expect("stdout reader");
    let (err_bytes, _) = stderr.join().expect("stderr reader");
    let status = status.unwrap_or_else(|| {
        panic!("the server did not end within 5 s of its input closing ({out_bytes} bytes written)")
    });
    assert!(status.success(), "{status}");
    assert!(
        out_bytes < BOUND,
        "{out_bytes} bytes on standard output: {}",
        String::from_utf8_lossy(&out)
    );
    assert!(err_bytes < BOUND, "{err_bytes} bytes on standard error");
    // The frames written: the initialize answer, then one error answer per
    // bad frame, the last for the header the stream ended in.
    let mut reader = BufReader::new(&out[..]);
    let mut messages = Vec::new();
    while let Some(m) = read_message(&mut reader) {
        messages.push(m);
    }
    // The reader answers bad frames itself, so they may come before the
    // `initialize` answer, which the server loop writes.
    assert!(messages
        .iter()
        .any(|m| m["id"] == json!(0) && m["result"].is_object()));
    let errors: Vec<&Value> = messages
        .iter()
        .filter(|m| m["id"].is_null())
        .map(|m| &m["error"]["message"])
        .collect();
    assert_eq!(
        errors,
        [
            "the frame's body is not UTF-8",
            "malformed frame header: no `Content-Length` header; skipped to the next `Content-Length` header",
            // The `Content-Length:` found is followed by bytes that are not
            // UTF-8, then no other: the last answer, and the server ends.
            "malformed frame header: a header line is not UTF-8; no `Content-Length` header follows",
        ]
    );
}
