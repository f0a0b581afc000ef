//! The access report's data and page, against the runtime's own answers.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use toolgate_access_report::{
    changes, console_page, denials, matrix, report_page, simulate, MatrixOptions, Report,
    SimulateRequest,
};
use toolgate_compiler::{lower, project::Project};
use toolgate_runtime::{Role, Table};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn compile(dir: &Path) -> Table {
    let project = Project::load(dir).expect("project loads");
    let checked = project.check();
    let model = checked.model.expect("project compiles");
    lower::table(&model).expect("table lowers")
}

const EXAMPLES: [&str; 6] = [
    "approvals",
    "demo",
    "exclusions",
    "mcp-profiles",
    "real-servers",
    "trust-zones",
];

/// A row of cells decoded as the page decodes it: run-length, or the
/// differences from an earlier row (`@CTX,CFG;`).
fn decode(m: &toolgate_access_report::Matrix, ctx: usize, cfg: usize) -> Vec<char> {
    let s = &m.strings[m.cells[ctx][cfg] as usize];
    let digits = |cs: &[char], i: &mut usize| -> Option<usize> {
        let start = *i;
        while *i < cs.len() && cs[*i].is_ascii_digit() {
            *i += 1;
        }
        (*i > start).then(|| cs[start..*i].iter().collect::<String>().parse().unwrap())
    };
    if let Some(rest) = s.strip_prefix('@') {
        let (head, body) = rest.split_once(';').unwrap();
        let (c, k) = head.split_once(',').unwrap();
        let (c, k): (usize, usize) = (c.parse().unwrap(), k.parse().unwrap());
        assert!(
            c < ctx || (c == ctx && k < cfg),
            "a reference is to an earlier row"
        );
        let mut out = decode(m, c, k);
        let cs: Vec<char> = body.chars().collect();
        let (mut i, mut pos) = (0, 0);
        while i < cs.len() {
            pos += digits(&cs, &mut i).unwrap_or(0);
            out[pos] = cs[i];
            i += 1;
            pos += 1;
        }
        return out;
    }
    let cs: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        i += 1;
        let n = digits(&cs, &mut i).unwrap_or(1);
        out.extend(std::iter::repeat_n(c, n));
    }
    out
}

#[test]
fn every_cell_is_the_runtime_decision_of_its_context() {
    for name in EXAMPLES {
        let table = compile(&root().join("policies").join(name));
        let m = matrix(&table, MatrixOptions::default());
        let consumers = 2 + table.spec().consumers.len();
        assert_eq!(m.contexts.len(), 3 * consumers * 3, "{name}");
        let refusals = m
            .refusals
            .as_ref()
            .expect("small projects carry refusal texts");
        for (ci, c) in m.contexts.iter().enumerate() {
            for (k, cfg) in table.configuration_names().enumerate() {
                let role = Role::ALL
                    .into_iter()
                    .find(|r| r.as_str() == c.role)
                    .unwrap();
                let ctx = table
                    .context(cfg)
                    .unwrap()
                    .role(role)
                    .consumer(c.consumer.as_deref())
                    .enforcement(c.mode);
                let cells = decode(&m, ci, k);
                let flat = &refusals.cells[ci][k];
                let mut texts = flat.chunks(2);
                assert_eq!(cells.len(), table.tool_count());
                for (i, d) in ctx.decisions().enumerate() {
                    let want = match (d.allowed, d.observed_only, d.reason) {
                        (true, _, _) if d.needs_approval => '!',
                        (true, true, _) => '~',
                        (true, false, _) => '+',
                        (false, _, Some(r)) if ctx.hides(&d) => r.letter().to_ascii_uppercase(),
                        (false, _, Some(r)) => r.letter(),
                        (false, _, None) => panic!("a refusal without a reason"),
                    };
                    assert_eq!(cells[i], want, "{name}: {} in {cfg}, context {ci}", d.tool);
                    if let Some(r) = ctx.refusal(&d) {
                        let pair = texts.next().expect("a text per refused cell");
                        assert_eq!(pair[0] as usize, i);
                        let (model, fix) = &refusals.texts[pair[1] as usize];
                        assert_eq!((model, fix), (&r.model_text, &r.remediation));
                    }
                }
                assert!(texts.next().is_none());
            }
        }
        if name == "approvals" {
            // The example's approvals show as `!` cells.
            assert!(
                (0..m.contexts.len())
                    .any(|ci| (0..m.configs.len()).any(|k| decode(&m, ci, k).contains(&'!'))),
                "no approval cell in the approvals example"
            );
        }
        // The readouts are the table's.
        for (k, c) in m.configs.iter().enumerate() {
            let (registered, stale) = table.exclusions_of(&c.name).unwrap();
            let names: Vec<&str> = c.excluded.iter().map(|&i| table.tool_name(i)).collect();
            assert_eq!(names, registered);
            assert_eq!(c.no_longer_registered, stale);
            for (i, t) in table.spec().tools.iter().enumerate() {
                let by = table.configurations_excluding(&t.name);
                let listed = m
                    .excluded_by
                    .iter()
                    .find(|(x, _)| *x as usize == i)
                    .map(|(_, v)| v.contains(&(k as u32)))
                    .unwrap_or(false);
                assert_eq!(listed, by.contains(&c.name.as_str()), "{name}: {}", t.name);
            }
        }
    }
}

#[test]
fn the_demo_matrix_holds_the_documented_refusals() {
    let table = compile(&root().join("policies/demo"));
    let m = matrix(&table, MatrixOptions::default());
    let cfg = m
        .configs
        .iter()
        .position(|c| c.name == "demo-chat")
        .unwrap();
    let tool = |n: &str| m.tools.iter().position(|t| t.0 == n).unwrap();
    // Context 0: user, no consumer, as configured.
    assert_eq!(
        (
            m.contexts[0].role,
            m.contexts[0].consumer.as_deref(),
            m.contexts[0].mode
        ),
        ("user", None, None)
    );
    let cells = decode(&m, 0, cfg);
    assert_eq!(cells[tool("search_pages")], '+');
    assert_eq!(cells[tool("read_source")], 'g');
    assert_eq!(cells[tool("get_env_raw")], 'a');
}

#[test]
fn the_page_is_one_file_whose_policy_admits_exactly_its_script_and_style() {
    let table = compile(&root().join("policies/demo"));
    let html = report_page(&Report {
        title: "policies/demo".into(),
        matrix: matrix(&table, MatrixOptions::default()),
        diff: None,
        denials: None,
    });
    let between = |a: &str, b: &str| -> String {
        let s = html.find(a).unwrap() + a.len();
        let e = s + html[s..].find(b).unwrap();
        html[s..e].to_string()
    };
    let script = between("<script>", "</script>");
    let style = between("<style>", "</style>");
    let hash = |t: &str| {
        let d = Sha256::digest(t.as_bytes());
        // base64 by the standard alphabet, checked against a second encoder.
        let mut out = String::new();
        for ch in d.chunks(3) {
            let n = (u32::from(ch[0]) << 16)
                | (u32::from(*ch.get(1).unwrap_or(&0)) << 8)
                | u32::from(*ch.get(2).unwrap_or(&0));
            let a = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            for j in 0..=ch.len() {
                out.push(a[((n >> (18 - 6 * j)) & 63) as usize] as char);
            }
            for _ in ch.len()..3 {
                out.push('=');
            }
        }
        format!("'sha256-{out}'")
    };
    let csp = between("http-equiv=\"Content-Security-Policy\" content=\"", "\"");
    assert_eq!(
        csp,
        format!("default-src 'none'; script-src {}; style-src {}; img-src data:; connect-src 'none'; base-uri 'none'; form-action 'none'", hash(&script), hash(&style))
    );
    // Nothing is fetched: no URL of any scheme in the page's own code.
    // (The one `http://` is the SVG namespace, a name, never fetched.)
    assert_eq!(
        script.matches("http://").count(),
        script.matches("http://www.w3.org/2000/svg").count()
    );
    for needle in ["https://", "src=\"", "href=", "@import", "url(", "http://"] {
        assert!(!style.contains(needle), "{needle}");
        assert!(needle == "http://" || !script.contains(needle), "{needle}");
    }
    let data = between("id=\"toolgate-data\">", "</script>");
    assert!(!data.contains('<') && !data.contains('>') && !data.contains('&'));
    let v: serde_json::Value = serde_json::from_str(&data).unwrap();
    assert_eq!(v["kind"], "report");
    assert_eq!(v["report"]["matrix"]["digest"], table.digest_hex());
    assert!(console_page().contains("connect-src 'self'"));
}

#[test]
fn hostile_names_stay_data() {
    let table = compile(&root().join("access-report/browser-tests/fixtures/hostile"));
    let html = report_page(&Report {
        // U+2028 can no longer be in a name (TG1012); a title may hold it.
        title: "<title>x</title> line\u{2028}sep".into(),
        matrix: matrix(&table, MatrixOptions::default()),
        diff: None,
        denials: None,
    });
    assert!(html.contains(
        "<title>toolgate access report: &lt;title&gt;x&lt;/title&gt; line\u{2028}sep</title>"
    ));
    assert_eq!(html.matches("</script>").count(), 2);
    assert!(!html.contains("<img"));
    assert!(!html.contains("<iframe"));
    assert!(html.contains(r"\u003cimg src=x onerror=alert(1)\u003e"));
    assert!(html.contains(r"line\u2028sep"));
}

#[test]
fn the_diff_is_the_compilers_and_the_log_the_runtimes() {
    let old = compile(&root().join("policies/demo"));
    let new = compile(&root().join("policies/exclusions"));
    let c = changes(&old, &new, "old");
    assert_eq!(c.diff, toolgate_review::diff::diff(&old, &new));
    assert_eq!(c.old_digest, old.digest_hex());
    let same = changes(&old, &old, "same");
    assert_eq!(
        same.diff.summary.widened + same.diff.summary.narrowed + same.diff.summary.reason_changed,
        0
    );

    let runtime = r#"{"timeUnixMs":60000,"table":"t","configuration":"a","role":"user","consumer":null,"tool":"x","allowed":false,"reason":"requiresAdmin","observedOnly":false}
{"timeUnixMs":180000,"table":"t","configuration":"b","role":"user","consumer":null,"tool":"y","allowed":true,"reason":null,"observedOnly":false}"#;
    let d = denials(runtime).unwrap();
    assert_eq!(
        d.stats,
        toolgate_runtime::log::LogStats::read(runtime).unwrap()
    );
    assert_eq!((d.start_ms, d.bucket_ms), (60_000, 10_000));
    assert_eq!(d.buckets.len(), 13);
    assert_eq!(d.buckets[0], vec![1, 1, 1]);
    assert_eq!(d.buckets[12], vec![1, 0, 0]);
    let e = denials("{}\n").unwrap_err();
    assert_eq!(e.line, 1);
}

#[test]
fn the_simulation_answers_as_the_cli_and_refuses_bad_input_with_the_field() {
    let table = compile(&root().join("policies/demo"));
    let req: SimulateRequest = serde_json::from_str(
        r#"{"configuration":"demo-chat","role":"user","tools":["read_source","nope"]}"#,
    )
    .unwrap();
    let s = simulate(&table, &req).unwrap();
    let ctx = table.context("demo-chat").unwrap();
    assert_eq!(s.unavailable, ctx.unavailable());
    assert_eq!(s.prompt, ctx.unavailable_prompt());
    assert_eq!(
        s.explain[0].reason,
        Some(toolgate_runtime::Reason::ConfigurationGroup)
    );
    assert_eq!(
        s.explain[1].reason,
        Some(toolgate_runtime::Reason::NotRegistered)
    );
    assert_eq!(
        s.refusals[0].as_ref().unwrap(),
        &ctx.refusal(&ctx.decide("read_source")).unwrap()
    );
    let bad = |j: &str| {
        let r: SimulateRequest = serde_json::from_str(j).unwrap();
        simulate(&table, &r).unwrap_err().to_string()
    };
    assert_eq!(
        bad(r#"{"configuration":"demo-chta"}"#),
        "`configuration`: unknown configuration `demo-chta`; did you mean `demo-chat`?"
    );
    assert_eq!(
        bad(r#"{"configuration":"demo-chat","role":"root"}"#),
        "`role`: `root` is not admin, user or none"
    );
    assert!(
        bad(r#"{"configuration":"demo-chat","run":{"allowedToolNames":7}}"#).starts_with("`run`: ")
    );
    assert!(serde_json::from_str::<SimulateRequest>(r#"{"configuration":"x","extra":1}"#).is_err());
}
