//! Every example of the diagnostics catalogue (docs/diagnostics.md) is run:
//! its registry, manifest and policy are written to a project, `toolgate
//! check --format plain` runs in it (or, for an entry with a
//! `tools-list.json`, the `toolgate registry ...` command its caption
//! names), and what it prints must be exactly the entry's `Output:` block.
//! The catalogue cannot drift from the compiler.

use std::path::Path;
use std::process::Command;

/// One entry's inputs and expected output.
#[derive(Default, Debug)]
struct Example {
    code: String,
    policy: Option<String>,
    registry: Option<String>,
    manifest: Option<String>,
    /// A `tools/list` answer, and the command that reads it (for the codes
    /// `registry import-mcp` and `registry sync` report).
    tools_list: Option<(String, Vec<String>)>,
    output: Option<String>,
}

/// The fenced blocks of each `## TGxxxx` section, by the caption line before each.
fn examples(doc: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut caption = String::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        if let Some(h) = line.strip_prefix("## TG") {
            out.push(Example {
                code: format!("TG{}", h.split(' ').next().unwrap_or_default()),
                ..Example::default()
            });
            continue;
        }
        if line.starts_with("```") {
            let mut body = String::new();
            for l in lines.by_ref() {
                if l.starts_with("```") {
                    break;
                }
                body.push_str(l);
                body.push('\n');
            }
            let Some(e) = out.last_mut() else { continue };
            let c = caption.as_str();
            if c.starts_with("Policy") {
                e.policy = Some(body);
            } else if c.starts_with("Registry") || c.starts_with("`registry.toml`") {
                e.registry = Some(body);
            } else if c.starts_with("`toolgate.toml`") {
                e.manifest = Some(body);
            } else if let Some(rest) = c.strip_prefix("`tools-list.json` (`toolgate ") {
                let command = rest.split('`').next().unwrap_or_default();
                e.tools_list = Some((body, command.split_whitespace().map(String::from).collect()));
            } else if c.starts_with("Output") {
                e.output = Some(body);
            }
            continue;
        }
        if !line.trim().is_empty() {
            caption = line.to_string();
        }
    }
    out
}

#[test]
fn every_catalogue_example_prints_exactly_its_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let doc = std::fs::read_to_string(root.join("docs/diagnostics.md")).unwrap();
    let demo = std::fs::read_to_string(root.join("policies/demo/registry.toml")).unwrap();
    let mut checked = Vec::new();
    let mut drift: Vec<(String, String, String)> = Vec::new();
    for e in examples(&doc) {
        let (Some(expected), true) = (
            &e.output,
            e.policy.is_some() || e.registry.is_some() || e.tools_list.is_some(),
        ) else {
            continue;
        };
        let dir = std::env::temp_dir().join(format!(
            "toolgate-catalogue-{}-{}",
            std::process::id(),
            e.code
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let manifest = e
            .manifest
            .clone()
            .unwrap_or_else(|| "registry = \"registry.toml\"\npolicies = [\"policy.tg\"]\n".into());
        std::fs::write(dir.join("toolgate.toml"), manifest).unwrap();
        std::fs::write(
            dir.join("registry.toml"),
            e.registry.clone().unwrap_or_else(|| demo.clone()),
        )
        .unwrap();
        std::fs::write(dir.join("policy.tg"), e.policy.clone().unwrap_or_default()).unwrap();
        let args: Vec<String> = match &e.tools_list {
            Some((answer, command)) => {
                std::fs::write(dir.join("tools-list.json"), answer).unwrap();
                command.clone()
            }
            None => ["check", "--format", "plain", "."]
                .map(String::from)
                .to_vec(),
        };
        let o = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .env_remove("GITHUB_STEP_SUMMARY")
            .args(&args)
            .output()
            .unwrap();
        let got = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        if got.trim_end() != expected.trim_end() {
            drift.push((
                e.code.clone(),
                expected.clone(),
                format!("{}\n", got.trim_end()),
            ));
        }
        checked.push(e.code);
    }
    if std::env::var_os("UPDATE_CATALOGUE").is_some() {
        // Regenerate: each drifted Output block, found after its section's heading.
        let mut doc = doc.clone();
        for (code, old, new) in &drift {
            let at = doc.find(&format!("## {code} ")).unwrap_or(0);
            let old = format!("```\n{old}```");
            if let Some(i) = doc[at..].find(&old) {
                doc.replace_range(at + i..at + i + old.len(), &format!("```\n{new}```"));
            }
        }
        std::fs::write(root.join("docs/diagnostics.md"), doc).unwrap();
    } else {
        let report: Vec<String> = drift
            .iter()
            .map(|(c, old, new)| format!("{c}:\n--- documented\n{old}--- printed\n{new}"))
            .collect();
        assert!(
            drift.is_empty(),
            "docs/diagnostics.md: Output blocks differ from what `toolgate check --format plain` prints (regenerate with UPDATE_CATALOGUE=1):\n{}",
            report.join("\n")
        );
    }
    // Every code with an example was run (a parsing slip would skip them).
    assert!(
        checked.len() >= 30,
        "only {} examples run: {checked:?}",
        checked.len()
    );
}

/// Every link toolgate prints to a catalogue entry (human headers, SARIF
/// `helpUri`, GitHub summaries) is an anchor GitHub makes for a heading of
/// docs/diagnostics.md: `## TG1010 exclusion-typo` -> `#tg1010-exclusion-typo`.
#[test]
fn every_catalogue_link_names_an_anchor_that_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let doc = std::fs::read_to_string(root.join("docs/diagnostics.md")).unwrap();
    let anchors: Vec<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(|h| h.to_lowercase().replace(' ', "-"))
        .collect();
    for c in toolgate_compiler::diagnostics::CATALOGUE {
        let url = toolgate_compiler::report::catalogue_url(c.code);
        let anchor = url.rsplit_once('#').map(|(_, a)| a.to_string());
        assert!(
            anchor.as_ref().is_some_and(|a| anchors.contains(a)),
            "{url}: no heading of docs/diagnostics.md has this anchor"
        );
    }
}
