//! The subcommands. Every answer comes from a compiled table: loaded from a
//! file, or compiled in memory from a project.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::json;
use toolgate_compiler::diagnostics::{Diagnostic, Severity};
use toolgate_compiler::project::Project;
use toolgate_compiler::{lower, registry, report, source::SourceMap};
use toolgate_runtime::{Context, Decision, GateOutcome, Reason, Role, RunState, Table};

use crate::*;

pub mod mcp;

type Res = Result<u8, Failure>;

/// At most this many diagnostics are rendered per project (the counts and the
/// exit code still reflect all of them).
const MAX_SHOWN: usize = 1000;

// ------------------------------------------------------------------ check

pub fn check(a: CheckArgs) -> Res {
    let paths = if a.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        a.paths.clone()
    };
    let mut all_errors = 0;
    let mut all_warnings = 0;
    let mut json_runs = Vec::new();
    let mut summary_md = String::new();
    for path in &paths {
        let project = Project::load(path)?;
        let checked = project.check();
        let all: Vec<Diagnostic> = checked.problems.iter().map(|p| p.diagnostic()).collect();
        let s = report::summary(&all);
        all_errors += s.errors;
        all_warnings += s.warnings;
        // A diagnostic storm is shown up to a limit; the counts stay exact.
        let diags = &all[..all.len().min(MAX_SHOWN)];
        if all.len() > MAX_SHOWN {
            write_err(&format!(
                "{}: {} diagnostics; showing the first {MAX_SHOWN}\n",
                path.display(),
                all.len()
            ));
        }
        let sources = &project.sources;
        match a.format {
            CheckFormat::Human => write_out(&report::human(sources, diags, color_stdout())),
            CheckFormat::Plain => write_out(&report::plain(sources, diags)),
            CheckFormat::Json => json_runs.push((path.clone(), report::json_value(sources, diags))),
            CheckFormat::Sarif => {
                if paths.len() > 1 {
                    return Err(Failure::Usage(
                        "--format sarif takes one project per run".into(),
                    ));
                }
                write_out(&report::sarif(sources, diags));
            }
            CheckFormat::Github => {
                write_out(&report::github(sources, diags));
                summary_md.push_str(&report::github_summary(sources, diags));
            }
        }
    }
    if a.format == CheckFormat::Json {
        let doc = if json_runs.len() == 1 {
            json_runs.remove(0).1
        } else {
            // Several projects: one object per project, same schema inside.
            json!({"version": 1, "projects": json_runs.iter().map(|(p, v)| json!({"path": p.display().to_string(), "result": v})).collect::<Vec<_>>()})
        };
        write_out(&format!("{}\n", serde_json::to_string_pretty(&doc)?));
    }
    if a.format == CheckFormat::Github {
        if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") {
            use std::io::Write as _;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?;
            f.write_all(summary_md.as_bytes())?;
        }
    }
    Ok(u8::from(
        all_errors > 0 || (a.deny_warnings && all_warnings > 0),
    ))
}

/// Compile a project in memory; on errors, the rendered diagnostics.
fn compile_project(path: &Path) -> Result<(Project, toolgate_compiler::model::Model), Failure> {
    let project = Project::load(path)?;
    let checked = project.check();
    match checked.model {
        Some(m) => Ok((project, m)),
        None => {
            let diags: Vec<Diagnostic> = checked
                .problems
                .iter()
                .map(|p| p.diagnostic())
                .filter(|d| d.severity == Severity::Error)
                .collect();
            Err(Failure::Findings(report::human(
                &project.sources,
                &diags,
                false,
            )))
        }
    }
}

pub fn compile(a: CompileArgs) -> Res {
    let (_, model) = compile_project(&a.project)?;
    let bytes = lower::compile(&model);
    // Verify by loading before anything is written: never leave a table the runtime would refuse.
    let table = Table::load(&bytes)?;
    write_atomic(&a.output, &bytes)?;
    write_err(&format!(
        "compiled {} tools, {} configurations into {} ({} bytes, digest {})\n",
        table.tool_count(),
        table.spec().configurations.len(),
        a.output.display(),
        bytes.len(),
        table.digest_hex()
    ));
    Ok(0)
}

// ------------------------------------------------------------------ runtime queries

fn load_table(project: &Path, table: Option<&Path>) -> Result<Table, Failure> {
    match table {
        Some(t) => {
            let bytes = read_file(t)?;
            Table::load(&bytes).map_err(|e| Failure::Usage(format!("{}: {e}", t.display())))
        }
        None => {
            let (_, model) = compile_project(project)?;
            Ok(lower::table(&model)?)
        }
    }
}

fn context<'t>(table: &'t Table, a: &ContextArgs) -> Result<Context<'t>, Failure> {
    let role = if a.admin {
        Role::Admin
    } else if a.no_user {
        Role::None
    } else {
        Role::User
    };
    let mut ctx = table
        .context(&a.config)?
        .role(role)
        .consumer(a.consumer.as_deref())
        .enforcement(a.enforcement.as_deref());
    if let Some(run) = &a.run {
        ctx = ctx.run(&stored_run(run)?);
    }
    Ok(ctx)
}

/// A stored run from a file. One that cannot be read admits no tool, and the
/// operator is told why on stderr (the answer itself stays fail-closed).
fn stored_run(path: &Path) -> Result<RunState, Failure> {
    let bytes = read_file(path)?;
    Ok(RunState::parse(&bytes).unwrap_or_else(|e| {
        write_err(&format!(
            "warning: {}: {e}; the run admits no tool\n",
            path.display()
        ));
        RunState::unreadable()
    }))
}

fn decision_text(d: &Decision<'_>) -> String {
    match (d.allowed, d.reason) {
        (true, Some(Reason::TrustZone)) => format!(
            "{}: offered (observed only: class {} is above the ceiling {} of zone {})",
            d.tool,
            d.class.unwrap_or("?"),
            d.ceiling.unwrap_or("?"),
            d.zone.unwrap_or("?")
        ),
        (true, _) => format!("{}: offered", d.tool),
        (false, Some(r)) => format!("{}: refused, {} ({})", d.tool, r.code(), r.message()),
        (false, None) => format!("{}: refused", d.tool),
    }
}

pub fn decide(a: DecideArgs) -> Res {
    let table = load_table(&a.ctx.project, a.ctx.table.as_deref())?;
    let ctx = context(&table, &a.ctx)?;
    let d = ctx.decide(&a.tool);
    if a.refusal {
        match ctx.refusal(&d) {
            Some(r) => write_out(&format!("{}\n", serde_json::to_string_pretty(&r)?)),
            None => write_out("null\n"),
        }
        return Ok(u8::from(!d.allowed));
    }
    match a.format {
        // Text is for a person: a hidden remote name reads as unregistered.
        OutFormat::Text => write_out(&format!("{}\n", decision_text(&ctx.shown(d)))),
        // JSON is for a host program: the true gate.
        OutFormat::Json => write_out(&format!("{}\n", serde_json::to_string(&d)?)),
    }
    Ok(u8::from(!d.allowed))
}

pub fn explain(a: ExplainArgs) -> Res {
    let table = load_table(&a.ctx.project, a.ctx.table.as_deref())?;
    let ctx = context(&table, &a.ctx)?;
    let names: Vec<&str> = a.tools.iter().map(String::as_str).collect();
    // `explain` shows to people: a hidden remote name reads as unregistered.
    let traces: Vec<_> = names.iter().map(|n| ctx.shown_trace(n)).collect();
    match a.format {
        OutFormat::Json => {
            let v: Vec<_> = traces
                .iter()
                .map(|t| {
                    json!({
                        "tool": t.decision.tool,
                        "allowed": t.decision.allowed,
                        "reason": t.decision.reason,
                        "observedOnly": t.decision.observed_only,
                        "class": t.decision.class,
                        "zone": t.decision.zone,
                        "ceiling": t.decision.ceiling,
                        "gates": t.gates.iter().map(|(g, o)| json!({"gate": g, "outcome": o})).collect::<Vec<_>>(),
                    })
                })
                .collect();
            write_out(&format!("{}\n", serde_json::to_string_pretty(&v)?));
        }
        OutFormat::Text => {
            let mut out = String::new();
            for t in &traces {
                let _ = writeln!(out, "{}", decision_text(&t.decision));
                for (g, o) in &t.gates {
                    let mark = match o {
                        GateOutcome::Passed => "pass   ",
                        GateOutcome::Refused => "REFUSE ",
                        GateOutcome::Observed => "observe",
                    };
                    let _ = writeln!(out, "  {mark} {}", g.code());
                }
            }
            write_out(&out);
        }
    }
    Ok(0)
}

pub fn unavailable(a: UnavailableArgs) -> Res {
    let table = load_table(&a.ctx.project, a.ctx.table.as_deref())?;
    let ctx = context(&table, &a.ctx)?;
    let list = ctx.unavailable();
    match a.format {
        UnavailableFormat::Json => {
            write_out(&format!("{}\n", serde_json::to_string_pretty(&list)?))
        }
        UnavailableFormat::Prompt => write_out(&ctx.unavailable_prompt()),
        UnavailableFormat::Text => {
            let mut out = String::new();
            for u in &list {
                let _ = writeln!(out, "{} {}", u.tool, u.reason.code());
            }
            write_out(&out);
        }
    }
    Ok(0)
}

pub fn simulate(a: SimulateArgs) -> Res {
    let table = load_table(&a.ctx.project, a.ctx.table.as_deref())?;
    let ctx = context(&table, &a.ctx)?;
    // For a person: the decisions as shown to this user, without the remote
    // tools whose names are hidden from them and refused. The note says the
    // rule, never how many it hid (a count would tell what exists).
    let decisions: Vec<Decision> = ctx.decisions().filter(|d| !ctx.hides(d)).collect();
    if !ctx.remote_names_visible() {
        write_err("note: the policy's `remote-tools visible-to` rule hides refused remote tools from this user; run with --admin to see them\n");
    }
    match a.format {
        OutFormat::Json => write_out(&format!("{}\n", serde_json::to_string_pretty(&decisions)?)),
        OutFormat::Text => {
            let w = decisions
                .iter()
                .map(|d| d.tool.len())
                .max()
                .unwrap_or(4)
                .max(4);
            let mut out = format!(
                "{:<w$}  {:<8}  {:<22}  {}\n",
                "tool", "offered", "reason", "class"
            );
            for d in &decisions {
                let offered = match (d.allowed, d.observed_only) {
                    (true, true) => "observed",
                    (true, false) => "yes",
                    _ => "no",
                };
                let _ = writeln!(
                    out,
                    "{:<w$}  {:<8}  {:<22}  {}",
                    d.tool,
                    offered,
                    d.reason.map(Reason::code).unwrap_or("-"),
                    d.class.unwrap_or("-")
                );
            }
            let offered = decisions.iter().filter(|d| d.allowed).count();
            let _ = writeln!(
                out,
                "\n{offered} of {} tools offered to configuration {} ({}, {}, trust zone {})",
                decisions.len(),
                ctx.configuration_name(),
                ctx.user_role().as_str(),
                ctx.mode().as_str(),
                table.zone_name(
                    table
                        .configuration(ctx.configuration_name())
                        .map(|c| c.zone)
                        .unwrap_or(0)
                ),
            );
            write_out(&out);
        }
    }
    Ok(0)
}

pub fn offered(a: SimulateArgs) -> Res {
    let table = load_table(&a.ctx.project, a.ctx.table.as_deref())?;
    let ctx = context(&table, &a.ctx)?;
    let set = ctx.tool_set();
    match a.format {
        OutFormat::Json => write_out(&format!("{}\n", serde_json::to_string_pretty(&set)?)),
        OutFormat::Text => {
            let mut out = String::new();
            for t in &set.offered {
                let _ = writeln!(out, "{t}");
            }
            // Text is for a person: only the names this user may see.
            let shown: Vec<_> = set.excluded.iter().filter(|u| u.name_visible).collect();
            if !shown.is_empty() {
                out.push_str("\nheld back:\n");
                for u in shown {
                    let _ = writeln!(out, "  {} {}", u.tool, u.reason.code());
                }
            }
            let _ = writeln!(
                out,
                "\n{} tools offered, {} descriptor bytes, about {} tokens (4 bytes per token)",
                set.offered.len(),
                set.descriptor_bytes,
                set.estimated_tokens
            );
            write_out(&out);
        }
    }
    Ok(0)
}

pub fn classify(a: ClassifyArgs) -> Res {
    let envelope = toolgate_runtime::Envelope::read(&read_file(&a.file)?);
    let answer = envelope.answer(a.http_status, a.origin.as_deref(), a.tool.as_deref());
    let outcome = match (&a.table, &a.project) {
        (None, None) => toolgate_runtime::classify_raw(&answer),
        (t, p) => {
            let project = p.clone().unwrap_or_else(|| PathBuf::from("."));
            load_table(&project, t.as_deref())?.classify_raw(&answer)
        }
    };
    write_out(&format!("{}\n", serde_json::to_string_pretty(&outcome)?));
    Ok(0)
}

// ------------------------------------------------------------------ readouts

pub fn show_tool(name: &str, src: SourceArgs) -> Res {
    let table = load_table(&src.project, src.table.as_deref())?;
    let spec = table.spec();
    let Some(id) = table.tool_id(name) else {
        return Err(Failure::Usage(format!("`{name}` is not a registered tool")));
    };
    let t = &spec.tools[id as usize];
    let excluding = table.configurations_excluding(name);
    let group = &spec.groups[t.group as usize].name;
    let v = json!({
        "tool": t.name,
        "group": group,
        "origin": if t.remote { "remote" } else { "builtin" },
        "enabled": t.enabled,
        "adminOnly": t.admin_only,
        "class": spec.classes[t.class as usize],
        "excludedBy": excluding,
        "descriptorBytes": t.descriptor_bytes,
    });
    match src.format {
        OutFormat::Json => write_out(&format!("{}\n", serde_json::to_string_pretty(&v)?)),
        OutFormat::Text => {
            let mut out = String::new();
            let _ = writeln!(out, "tool        {}", t.name);
            let _ = writeln!(out, "group       {group}");
            let _ = writeln!(
                out,
                "origin      {}",
                if t.remote { "remote" } else { "builtin" }
            );
            let _ = writeln!(
                out,
                "state       {}",
                if t.enabled { "enabled" } else { "disabled" }
            );
            let _ = writeln!(
                out,
                "admin-only  {}",
                if t.admin_only { "yes" } else { "no" }
            );
            let _ = writeln!(out, "class       {}", spec.classes[t.class as usize]);
            let _ = writeln!(
                out,
                "excluded by {}",
                if excluding.is_empty() {
                    "-".to_string()
                } else {
                    excluding.join(", ")
                }
            );
            write_out(&out);
        }
    }
    Ok(0)
}

pub fn show_config(name: &str, src: SourceArgs) -> Res {
    let table = load_table(&src.project, src.table.as_deref())?;
    let spec = table.spec();
    let c = table
        .configuration(name)
        .ok_or_else(|| Failure::Usage(format!("unknown configuration `{name}`")))?;
    let (registered, stale) = table.exclusions_of(name).unwrap_or_default();
    let zone = &spec.zones[c.zone as usize];
    let groups: Option<Vec<&str>> = c.groups.as_ref().map(|g| {
        g.iter()
            .map(|&i| spec.groups[i as usize].name.as_str())
            .collect()
    });
    let skills: Vec<&str> = c
        .skills
        .iter()
        .map(|&s| spec.skills[s as usize].name.as_str())
        .collect();
    let v = json!({
        "configuration": c.name,
        "file": c.file,
        "provider": c.provider,
        "zone": zone.name,
        "ceiling": spec.classes[zone.ceiling as usize],
        "groups": groups,
        "excluded": registered,
        "noLongerRegistered": stale,
        "skills": skills,
    });
    match src.format {
        OutFormat::Json => write_out(&format!("{}\n", serde_json::to_string_pretty(&v)?)),
        OutFormat::Text => {
            let mut out = String::new();
            let _ = writeln!(out, "configuration  {}  ({})", c.name, c.file);
            let _ = writeln!(
                out,
                "provider       {}",
                c.provider.as_deref().unwrap_or("- (least trusted zone)")
            );
            let _ = writeln!(out, "zone           {}", zone.name);
            let _ = writeln!(
                out,
                "ceiling        {}",
                spec.classes[zone.ceiling as usize]
            );
            let _ = writeln!(
                out,
                "groups         {}",
                groups.map(|g| g.join(", ")).unwrap_or_else(|| "all".into())
            );
            let _ = writeln!(
                out,
                "excluded       {}",
                if registered.is_empty() {
                    "-".into()
                } else {
                    registered.join(", ")
                }
            );
            if !stale.is_empty() {
                let _ = writeln!(out, "no longer registered  {}", stale.join(", "));
            }
            let _ = writeln!(
                out,
                "skills         {}",
                if skills.is_empty() {
                    "-".into()
                } else {
                    skills.join(", ")
                }
            );
            write_out(&out);
        }
    }
    Ok(0)
}

pub fn run_start(src: SourceArgs, config: &str, skills: &[String], stored: Option<PathBuf>) -> Res {
    let table = load_table(&src.project, src.table.as_deref())?;
    let extra: Vec<&str> = skills.iter().map(String::as_str).collect();
    let live = RunState::start(&table, config, &extra)?;
    let state = match stored {
        None => live,
        Some(p) => stored_run(&p)?.resume(&live),
    };
    write_out(&format!("{}\n", state.to_json()));
    Ok(0)
}

// ------------------------------------------------------------------ stats

pub fn stats(a: StatsArgs) -> Res {
    let text = String::from_utf8_lossy(&read_file(&a.log)?).into_owned();
    let stats = toolgate_runtime::log::LogStats::read(&text)
        .map_err(|e| Failure::Usage(format!("{}:{}", a.log.display(), e)))?;
    match a.format {
        OutFormat::Json => write_out(&format!("{}\n", serde_json::to_string_pretty(&stats)?)),
        OutFormat::Text => {
            let mut out = format!(
                "{} decisions, {} refused, {} offered under observe\n\nrefusals by reason\n",
                stats.decisions, stats.refused, stats.observed_only
            );
            let max = stats
                .by_reason
                .iter()
                .map(|r| r.1)
                .max()
                .unwrap_or(1)
                .max(1);
            for (code, c) in &stats.by_reason {
                let bar = "█".repeat((c * 40).div_ceil(max));
                let _ = writeln!(out, "  {code:<22} {c:>7}  {bar}");
            }
            out.push_str("\nrefusals by configuration\n");
            for (cfg, m) in &stats.by_configuration {
                let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k} {v}")).collect();
                let _ = writeln!(
                    out,
                    "  {cfg:<22} {:>7}  {}",
                    m.values().sum::<usize>(),
                    parts.join(", ")
                );
            }
            write_out(&out);
        }
    }
    Ok(0)
}

// ------------------------------------------------------------------ review

/// Extract `project` as it is at git revision `rev` into a temporary directory.
fn project_at_revision(project: &Path, rev: &str) -> Result<(PathBuf, tempfile::TempDir), Failure> {
    let abs = std::fs::canonicalize(project)?;
    let top = std::process::Command::new("git")
        .arg("-C")
        .arg(&abs)
        .args(["rev-parse", "--show-toplevel"])
        .output()?;
    if !top.status.success() {
        return Err(Failure::Usage(format!(
            "{}: not in a git repository",
            project.display()
        )));
    }
    let top = PathBuf::from(String::from_utf8_lossy(&top.stdout).trim());
    let rel = abs
        .strip_prefix(&top)
        .map_err(|_| Failure::Usage("project is outside the repository".into()))?
        .to_path_buf();
    let tmp = tempfile::tempdir()?;
    let archive = std::process::Command::new("git")
        .arg("-C")
        .arg(&top)
        .args(["archive", "--format=tar", rev, "--"])
        .arg(if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            &rel
        })
        .output()?;
    if !archive.status.success() {
        return Err(Failure::Usage(format!(
            "git archive {rev}: {}",
            String::from_utf8_lossy(&archive.stderr).trim()
        )));
    }
    let mut tar = std::process::Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(tmp.path())
        .stdin(std::process::Stdio::piped())
        .spawn()?;
    if let Some(stdin) = tar.stdin.as_mut() {
        use std::io::Write as _;
        stdin.write_all(&archive.stdout)?;
    }
    tar.wait()?;
    Ok((tmp.path().join(rel), tmp))
}

pub fn diff(a: DiffArgs) -> Res {
    let (old_dir, new_dir, _guard) = match (&a.git, &a.new) {
        (Some(rev), None) => {
            let (old, guard) = project_at_revision(&a.old, rev)?;
            (old, a.old.clone(), Some(guard))
        }
        (None, Some(new)) => (a.old.clone(), new.clone(), None),
        _ => {
            return Err(Failure::Usage(
                "give OLD and NEW project directories, or one PROJECT with --git REV".into(),
            ))
        }
    };
    let old = load_table(&old_dir, None)?;
    let new = load_table(&new_dir, None)?;
    let d = toolgate_compiler::diff::diff(&old, &new);
    match a.format {
        DiffFormat::Text => write_out(&d.text()),
        DiffFormat::Markdown => write_out(&d.markdown()),
        DiffFormat::Json => write_out(&format!("{}\n", serde_json::to_string_pretty(&d)?)),
    }
    Ok(u8::from(a.fail_on_widen && d.summary.widened > 0))
}

pub fn snapshot(a: SnapshotArgs) -> Res {
    let table = load_table(&a.project, None)?;
    let text = toolgate_compiler::snapshot::snapshot(&table);
    let path = a
        .output
        .clone()
        .unwrap_or_else(|| a.project.join(toolgate_compiler::snapshot::FILE_NAME));
    if a.output.is_none() {
        // The default file lies in the project: a symlink there that leaves
        // it is neither read (its lines would be echoed) nor written through.
        if let (Ok(f), Ok(root)) = (
            std::fs::canonicalize(&path),
            std::fs::canonicalize(&a.project),
        ) {
            if !f.starts_with(root) {
                return Err(Failure::Usage(format!(
                    "{}: a symlink that resolves outside the project; remove it, or give the file with -o",
                    path.display()
                )));
            }
        }
    }
    if a.check {
        let current = match std::fs::symlink_metadata(&path) {
            Err(_) => String::new(),
            Ok(_) => String::from_utf8_lossy(&read_file(&path)?).into_owned(),
        };
        if current == text {
            return Ok(0);
        }
        let old: std::collections::BTreeSet<&str> = current.lines().collect();
        let new: std::collections::BTreeSet<&str> = text.lines().collect();
        let mut out = format!(
            "{} is out of date; run `toolgate snapshot {}`\n",
            path.display(),
            a.project.display()
        );
        for l in new.difference(&old) {
            let _ = writeln!(out, "+ {l}");
        }
        for l in old.difference(&new) {
            let _ = writeln!(out, "- {l}");
        }
        write_err(&out);
        return Ok(1);
    }
    write_atomic(&path, text.as_bytes())?;
    Ok(0)
}

pub fn test(a: TestArgs) -> Res {
    use toolgate_compiler::testing;
    let paths = if a.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        a.paths.clone()
    };
    let want_coverage = a.coverage || a.threshold.is_some();
    let mut report = testing::Report::default();
    // Nothing covered of nothing reachable yet: 100%, as `coverage` says.
    let mut cov = testing::Coverage {
        percent: 100.0,
        ..testing::Coverage::default()
    };
    for p in &paths {
        let table = load_table(p, None)?;
        let files = testing::test_files(p);
        let mut covered = std::collections::BTreeSet::new();
        let r = testing::run(&table, &files, &mut covered);
        report.passed += r.passed;
        report.failed += r.failed;
        report.cases.extend(r.cases);
        if want_coverage {
            let prefix = if paths.len() > 1 {
                format!("{}: ", p.display())
            } else {
                String::new()
            };
            cov.add(testing::coverage(&table, &covered), &prefix);
        }
    }
    if want_coverage {
        report.coverage = Some(cov.clone());
    }
    match a.format {
        TestFormat::Text => write_out(&report.text()),
        TestFormat::Json => write_out(&format!("{}\n", serde_json::to_string_pretty(&report)?)),
        TestFormat::Junit => write_out(&report.junit()),
    }
    let under = a.threshold.is_some_and(|t| cov.percent < t);
    if under && a.format == TestFormat::Text {
        write_err(&format!(
            "coverage {:.1}% is below the threshold {:.1}%\n",
            cov.percent,
            a.threshold.unwrap_or(0.0)
        ));
    }
    Ok(u8::from(report.failed > 0 || under))
}

pub fn fmt(a: FmtArgs) -> Res {
    let paths = if a.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        a.paths.clone()
    };
    // (file, whether -w may write it): a project's policy files outside the
    // project directory (`allow-outside-project`) are never written.
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    for p in &paths {
        if p.is_dir()
            || p.file_name()
                .is_some_and(|n| n == toolgate_compiler::project::MANIFEST)
        {
            let project = Project::load(p)?;
            files.extend(project.policy_files());
        } else {
            // A file named on the command line is written and quoted only
            // when it lies inside the current directory (a symlink that
            // leaves it, e.g. to /proc/self/environ, is neither).
            let inside = match (std::fs::canonicalize(p), std::env::current_dir()) {
                (Ok(f), Ok(cwd)) => std::fs::canonicalize(cwd).is_ok_and(|c| f.starts_with(c)),
                _ => false,
            };
            files.push((p.clone(), inside));
        }
    }
    let mut changed = Vec::new();
    for (f, writable) in &files {
        let text = String::from_utf8(read_file_capped(
            f,
            toolgate_compiler::parse::MAX_POLICY_BYTES,
        )?)
        .map_err(|_| Failure::Usage(format!("{}: not UTF-8", f.display())))?;
        let formatted = match toolgate_compiler::formatter::format(&text) {
            Ok(t) => t,
            Err(problem) => {
                let mut sources = SourceMap::new();
                let id = sources.add(f.display().to_string(), text);
                let problem = if *writable {
                    problem
                } else {
                    sources.forbid_quoting(id);
                    toolgate_compiler::project::redact_problem(problem)
                };
                return Err(Failure::Findings(report::human(
                    &sources,
                    &[problem.diagnostic()],
                    false,
                )));
            }
        };
        if formatted != text {
            changed.push(f.display().to_string());
            if a.write {
                if !writable {
                    return Err(Failure::Usage(format!(
                        "{}: outside the project (or current) directory; `fmt -w` writes only inside it",
                        f.display()
                    )));
                }
                write_atomic(f, formatted.as_bytes())?;
            }
        }
        if !a.write && !a.check {
            write_out(&formatted);
        }
    }
    if a.check {
        for c in &changed {
            write_out(&format!("{c}\n"));
        }
        return Ok(u8::from(!changed.is_empty()));
    }
    Ok(0)
}

// ------------------------------------------------------------------ serve

pub fn serve(a: ServeArgs) -> Res {
    use toolgate_serve::{Limits, LogTarget, Options, Source};
    let source = match (a.table, a.project) {
        (Some(t), _) => Source::Table(t),
        (None, Some(p)) => Source::Project(p),
        (None, None) => return Err(Failure::Usage("give --table FILE or --project DIR".into())),
    };
    let mut opts = Options::new(source);
    opts.addr = a.addr;
    opts.public_url = a.public_url;
    opts.limits = Limits {
        max_body_bytes: a.max_body_bytes,
        max_evaluations: a.max_evaluations,
        max_concurrency: a.max_concurrency.max(1),
    };
    opts.decision_log = a.decision_log.map(|p| {
        if p.as_os_str() == "-" {
            LogTarget::Stdout
        } else {
            LogTarget::File(p)
        }
    });
    opts.log_buffer = a.log_buffer;
    opts.watch = !a.no_watch;
    toolgate_serve::run(opts).map_err(Failure::Usage)?;
    Ok(0)
}
