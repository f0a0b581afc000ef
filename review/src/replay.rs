//! Replay a decision log against a proposed table: of the decisions really
//! taken (docs/decision-log.md, either format), which would change under
//! NEW, and how. Both answers come from the tables (`Context::decide`),
//! never from the record alone: a record is compared only when OLD
//! reproduces it, so a record decided with facts the log does not hold
//! (a runtime record's stored run, a live tool's metadata) is counted as
//! not reproduced instead of being misread.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use toolgate_runtime::log::{LogLineError, LogRecord, ServiceRecord};
use toolgate_runtime::{Context, Reason, Role, RunState, Table};

use crate::diff::{md_code, ChangeKind, Verdict};

/// How many tools and consumers the summary names.
pub const TOP: usize = 10;

/// One recorded decision that changes under NEW.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replayed {
    /// 1-based line of the log.
    pub line: usize,
    /// As recorded: milliseconds since the epoch (runtime log) or RFC 3339 (service log).
    pub time: String,
    pub configuration: String,
    pub role: Role,
    pub consumer: Option<String>,
    pub tool: String,
    pub kind: ChangeKind,
    /// The recorded decision (OLD's, reproduced).
    pub old: Verdict,
    pub new: Verdict,
}

/// Changes counted by direction.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub widened: usize,
    pub narrowed: usize,
    pub reason_changed: usize,
}

impl Counts {
    fn add(&mut self, k: ChangeKind) {
        match k {
            ChangeKind::Widened => self.widened += 1,
            ChangeKind::Narrowed => self.narrowed += 1,
            ChangeKind::ReasonChanged => self.reason_changed += 1,
        }
    }
    pub fn total(&self) -> usize {
        self.widened + self.narrowed + self.reason_changed
    }
}

/// Changes from one reason to another (`None`: offered).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReasonChange {
    pub kind: ChangeKind,
    pub from: Option<Reason>,
    pub to: Option<Reason>,
    pub count: usize,
}

/// `toolgate diff OLD NEW --replay LOG --format json`: the diff and the
/// replayed log.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffReplay<'a> {
    pub diff: &'a crate::diff::Diff,
    pub replay: &'a Replay,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replay {
    /// sha256 of OLD and NEW's payloads.
    pub old_table: String,
    pub new_table: String,
    /// Records read.
    pub records: usize,
    /// Records made by OLD's table and reproduced by it: the ones compared.
    pub compared: usize,
    /// Records made by another table than OLD (by digest): reported, not compared.
    pub other_tables: BTreeMap<String, usize>,
    /// Records of OLD's table that OLD does not reproduce from what the log
    /// holds (a runtime record decided with a stored run, a live tool).
    pub not_reproduced: usize,
    /// Records of a configuration NEW no longer has (a host asking for it is
    /// refused), by configuration.
    pub configurations_removed: BTreeMap<String, usize>,
    pub changed: Counts,
    pub by_configuration: BTreeMap<String, Counts>,
    pub by_reason: Vec<ReasonChange>,
    /// The most affected tools and consumers (`-` for no consumer), most changes first.
    pub top_tools: Vec<(String, Counts)>,
    pub top_consumers: Vec<(String, Counts)>,
    /// Every changed record, in log order.
    pub records_changed: Vec<Replayed>,
}

/// What replay needs of one line, in either format.
struct Line {
    time: String,
    table: String,
    configuration: String,
    role: String,
    consumer: Option<String>,
    tool: String,
    enforcement: Option<String>,
    run: Option<RunState>,
    recorded: Verdict,
    /// A runtime record does not say which enforcement the host set.
    mode_known: bool,
}

impl Line {
    fn read(line: &str) -> Result<Line, String> {
        let runtime_error = match serde_json::from_str::<LogRecord>(line) {
            Ok(r) => {
                return Ok(Line {
                    time: r.time_unix_ms.to_string(),
                    table: r.table,
                    configuration: r.configuration,
                    role: r.role,
                    consumer: r.consumer,
                    enforcement: None,
                    run: None,
                    recorded: verdict(r.allowed, r.reason.as_deref(), r.observed_only)?,
                    tool: r.tool,
                    mode_known: false,
                })
            }
            Err(e) => e.to_string(),
        };
        match serde_json::from_str::<ServiceRecord>(line) {
            Ok(r) => {
                let c = r.result.context;
                Ok(Line {
                    time: r.timestamp,
                    table: r.table_digest,
                    configuration: r.input.context.configuration,
                    role: r.input.subject.properties.role,
                    consumer: r.input.subject.properties.consumer,
                    enforcement: r.input.context.enforcement,
                    run: r
                        .input
                        .context
                        .run
                        .map(|v| RunState::from_json(&v.to_string())),
                    recorded: verdict(r.result.decision, c.reason.as_deref(), c.observed_only)?,
                    tool: r.input.resource.id,
                    mode_known: true,
                })
            }
            Err(e) if line.contains("\"decision_id\"") => Err(e.to_string()),
            Err(_) => Err(runtime_error),
        }
    }
}

fn verdict(allowed: bool, reason: Option<&str>, observed_only: bool) -> Result<Verdict, String> {
    // A call that waited for a person's approval: the tool was offered, and
    // needed approval (the one record that says so).
    if reason == Some("approvalRequired") {
        return Ok(Verdict {
            allowed: true,
            reason: None,
            observed_only,
            needs_approval: true,
        });
    }
    let reason = match reason {
        None => None,
        Some(code) => {
            Some(Reason::from_code(code).ok_or_else(|| format!("unknown reason code `{code}`"))?)
        }
    };
    Ok(Verdict {
        allowed,
        reason,
        observed_only,
        needs_approval: false,
    })
}

fn role(text: &str) -> Result<Role, String> {
    Role::ALL
        .into_iter()
        .find(|r| r.as_str() == text)
        .ok_or_else(|| format!("unknown role `{text}` (admin, user or none)"))
}

type Key = (String, Role, Option<String>, Option<String>);

/// Contexts are few (configuration × role × consumer × mode): made once each.
type Contexts<'t> = HashMap<Key, Option<(Context<'t>, Context<'t>)>>;

/// What NEW decides for a record that OLD reproduces: `None` when OLD
/// does not reproduce it, `Some(None)` when NEW lacks its configuration.
fn reproduce<'t>(
    old: &'t Table,
    new: &'t Table,
    l: &Line,
    role: Role,
    contexts: &mut Contexts<'t>,
) -> Option<Option<Verdict>> {
    // The modes to try: the recorded one, else (a runtime record) the
    // policy's first, then each override; the first that reproduces the
    // record is the one the host used.
    let known = [l.enforcement.as_deref()];
    let guessed = [None, Some("observe"), Some("enforce")];
    let modes: &[Option<&str>] = if l.mode_known { &known } else { &guessed };
    let mut found = None;
    for &mode in modes {
        let made = || {
            make(
                old,
                new,
                &l.configuration,
                role,
                l.consumer.as_deref(),
                mode,
            )
        };
        let pair = if let Some(run) = &l.run {
            made().map(|(a, b)| (a.run(run), b.run(run)))
        } else {
            let key = (
                l.configuration.clone(),
                role,
                l.consumer.clone(),
                mode.map(str::to_string),
            );
            contexts.entry(key).or_insert_with(made).clone()
        };
        let Some((oc, nc)) = pair else {
            // OLD has the configuration (it decided), NEW does not.
            if old.context(&l.configuration).is_ok() {
                found = Some(None);
            }
            break;
        };
        // Only a call that waited for approval records whether the tool
        // needed it; other records are compared without it.
        let seen = |v: Verdict| {
            if l.recorded.needs_approval {
                v
            } else {
                Verdict {
                    needs_approval: false,
                    ..v
                }
            }
        };
        let ov = seen(Verdict::of(&oc.decide(&l.tool)));
        if ov == l.recorded {
            found = Some(Some(seen(Verdict::of(&nc.decide(&l.tool)))));
            break;
        }
    }
    found
}

/// Replay every record of `log` (JSON lines; blank lines skipped) against
/// OLD and NEW. A line that is not a decision record is an error naming it.
pub fn replay(old: &Table, new: &Table, log: &str) -> Result<Replay, LogLineError> {
    let mut r = Replay {
        old_table: old.digest_hex(),
        new_table: new.digest_hex(),
        ..Replay::default()
    };
    let mut contexts: Contexts = HashMap::new();
    let mut by_reason: BTreeMap<(ChangeKind, Option<Reason>, Option<Reason>), usize> =
        BTreeMap::new();
    let mut tools: HashMap<String, Counts> = HashMap::new();
    let mut consumers: HashMap<String, Counts> = HashMap::new();
    for (n, text) in log.lines().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let err = |message: String| LogLineError {
            line: n + 1,
            message,
        };
        let l = Line::read(text).map_err(err)?;
        let role = role(&l.role).map_err(err)?;
        r.records += 1;
        if l.table != r.old_table {
            *r.other_tables.entry(l.table).or_default() += 1;
            continue;
        }
        let found = reproduce(old, new, &l, role, &mut contexts);
        let nv = match found {
            None => {
                r.not_reproduced += 1;
                continue;
            }
            Some(None) => {
                r.compared += 1;
                *r.configurations_removed.entry(l.configuration).or_default() += 1;
                continue;
            }
            Some(Some(v)) => v,
        };
        r.compared += 1;
        let ov = l.recorded;
        let Some(kind) = ChangeKind::between(&ov, &nv) else {
            continue;
        };
        r.changed.add(kind);
        r.by_configuration
            .entry(l.configuration.clone())
            .or_default()
            .add(kind);
        *by_reason.entry((kind, ov.reason, nv.reason)).or_default() += 1;
        tools.entry(l.tool.clone()).or_default().add(kind);
        consumers
            .entry(l.consumer.clone().unwrap_or_else(|| "-".into()))
            .or_default()
            .add(kind);
        r.records_changed.push(Replayed {
            line: n + 1,
            time: l.time,
            configuration: l.configuration,
            role,
            consumer: l.consumer,
            tool: l.tool,
            kind,
            old: ov,
            new: nv,
        });
    }
    r.by_reason = by_reason
        .into_iter()
        .map(|((kind, from, to), count)| ReasonChange {
            kind,
            from,
            to,
            count,
        })
        .collect();
    r.top_tools = top(tools);
    r.top_consumers = top(consumers);
    Ok(r)
}

fn make<'t>(
    old: &'t Table,
    new: &'t Table,
    configuration: &str,
    role: Role,
    consumer: Option<&str>,
    mode: Option<&str>,
) -> Option<(Context<'t>, Context<'t>)> {
    let ctx = |t: &'t Table| {
        t.context(configuration)
            .ok()
            .map(|c| c.role(role).consumer(consumer).enforcement(mode))
    };
    Some((ctx(old)?, ctx(new)?))
}

/// Most changes first (widenings weigh first), then by name.
fn top(m: HashMap<String, Counts>) -> Vec<(String, Counts)> {
    let mut v: Vec<(String, Counts)> = m.into_iter().collect();
    v.sort_by(|a, b| {
        (b.1.widened, b.1.total())
            .cmp(&(a.1.widened, a.1.total()))
            .then_with(|| a.0.cmp(&b.0))
    });
    v.truncate(TOP);
    v
}

fn reason_text(r: Option<Reason>) -> &'static str {
    r.map_or("offered", Reason::code)
}

impl Replay {
    pub fn text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let c = &self.changed;
        let _ = writeln!(
            out,
            "replay: {} records, {} compared: {} widened, {} narrowed, {} reason changed",
            self.records, self.compared, c.widened, c.narrowed, c.reason_changed
        );
        for (digest, n) in &self.other_tables {
            let _ = writeln!(
                out,
                "{n} records of table {digest} (not OLD's {}): not compared",
                self.old_table
            );
        }
        if self.not_reproduced > 0 {
            let _ = writeln!(
                out,
                "{} records OLD does not reproduce from the log (a stored run or a live tool): not compared",
                self.not_reproduced
            );
        }
        for (cfg, n) in &self.configurations_removed {
            let _ = writeln!(out, "{n} records of configuration {cfg}, which NEW removes");
        }
        for (cfg, k) in &self.by_configuration {
            let _ = writeln!(
                out,
                "configuration {cfg}: {} widened, {} narrowed, {} reason changed",
                k.widened, k.narrowed, k.reason_changed
            );
        }
        for rc in &self.by_reason {
            let _ = writeln!(
                out,
                "{:<14} {} -> {}: {}",
                rc.kind.label(),
                reason_text(rc.from),
                reason_text(rc.to),
                rc.count
            );
        }
        for (label, list) in [("tool", &self.top_tools), ("consumer", &self.top_consumers)] {
            for (name, k) in list {
                let _ = writeln!(
                    out,
                    "{label} {}: {} changed ({} widened)",
                    toolgate_runtime::names::escape(name),
                    k.total(),
                    k.widened
                );
            }
        }
        out
    }

    /// Markdown for a pull-request comment.
    pub fn markdown(&self) -> String {
        use std::fmt::Write as _;
        let c = &self.changed;
        let mut out =
            String::from("## toolgate: this change replayed against recorded decisions\n\n");
        let _ = writeln!(
            out,
            "| records | compared | widened | narrowed | reason changed |\n| ---: | ---: | ---: | ---: | ---: |\n| {} | {} | **{}** | {} | {} |\n",
            self.records, self.compared, c.widened, c.narrowed, c.reason_changed
        );
        if c.widened > 0 {
            out.push_str("> [!WARNING]\n> Recorded traffic would be **widened**: tools refused in these decisions would be offered.\n\n");
        }
        if !self.other_tables.is_empty() {
            let n: usize = self.other_tables.values().sum();
            let _ = writeln!(
                out,
                "> [!NOTE]\n> {n} records were made by another table than the base (`{}`) and were not compared.\n",
                &self.old_table[..self.old_table.len().min(12)]
            );
        }
        if self.not_reproduced > 0 {
            let _ = writeln!(
                out,
                "{} records could not be reproduced from the log (a stored run or a live tool) and were not compared.\n",
                self.not_reproduced
            );
        }
        for (cfg, n) in &self.configurations_removed {
            let _ = writeln!(
                out,
                "{n} records of configuration {}, which this change removes.\n",
                md_code(cfg)
            );
        }
        if c.total() == 0 {
            out.push_str("No recorded decision changes.\n");
            return out;
        }
        out.push_str("| configuration | widened | narrowed | reason changed |\n| --- | ---: | ---: | ---: |\n");
        for (cfg, k) in &self.by_configuration {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                md_code(cfg),
                k.widened,
                k.narrowed,
                k.reason_changed
            );
        }
        out.push_str("\n| direction | from | to | decisions |\n| --- | --- | --- | ---: |\n");
        for rc in &self.by_reason {
            let _ = writeln!(
                out,
                "| {} | `{}` | `{}` | {} |",
                rc.kind.label(),
                reason_text(rc.from),
                reason_text(rc.to),
                rc.count
            );
        }
        for (label, list) in [
            ("Most affected tools", &self.top_tools),
            ("Most affected consumers", &self.top_consumers),
        ] {
            let items: Vec<String> = list
                .iter()
                .map(|(n, k)| format!("{} ({}, {} widened)", md_code(n), k.total(), k.widened))
                .collect();
            let _ = writeln!(out, "\n**{label}:** {}", items.join(", "));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::ChangeKind;
    use toolgate_compiler::lower;
    use toolgate_compiler::project::Project;
    use toolgate_runtime::log::DecisionLog;

    const REG: &str = "[[tool]]\nname = \"read\"\ngroup = \"content\"\nclass = \"publicContent\"\n\n[[tool]]\nname = \"dump\"\ngroup = \"system\"\nclass = \"secretAdjacent\"\n";

    fn table(policy: &str) -> Table {
        let m = Project::from_texts(("registry.toml", REG), &[("p.tg", policy)])
            .check()
            .model
            .expect("compiles");
        Table::load(&lower::compile(&m)).expect("loads")
    }

    #[test]
    fn runtime_records_replay_with_the_mode_that_reproduces_them() {
        let old = table("provider p { zone externalGlobal }\nconfiguration a { provider p }\nconfiguration b { provider p }\n");
        let new = table("provider p { zone local }\nconfiguration a { provider p }\n");
        let mut log = DecisionLog::new(Vec::new());
        // The policy enforces; the host observed: `dump` offered, observed only.
        let observed = old
            .context("a")
            .unwrap()
            .role(Role::User)
            .enforcement(Some("observe"));
        log.record(&observed, &observed.decide("dump")).unwrap();
        let enforced = old.context("a").unwrap().role(Role::User);
        log.record(&enforced, &enforced.decide("dump")).unwrap();
        log.record(&enforced, &enforced.decide("read")).unwrap();
        let gone = old.context("b").unwrap().role(Role::Admin);
        log.record(&gone, &gone.decide("read")).unwrap();
        let mut text = String::from_utf8(log.into_inner()).unwrap();
        // A record OLD cannot reproduce (written with a stored run the log does not hold).
        let forged = text
            .lines()
            .nth(2)
            .unwrap()
            .replace("\"allowed\":true", "\"allowed\":false")
            .replace("\"reason\":null", "\"reason\":\"configurationExcluded\"");
        text.push_str(&forged);
        text.push('\n');
        let r = replay(&old, &new, &text).unwrap();
        assert_eq!((r.records, r.compared, r.not_reproduced), (5, 4, 1));
        assert_eq!(
            r.configurations_removed,
            BTreeMap::from([("b".to_string(), 1)])
        );
        // Under NEW (zone local) `dump` is below the ceiling: observed only becomes
        // a plain offer (reason changed), the enforced refusal is widened.
        let kinds: Vec<(usize, ChangeKind)> =
            r.records_changed.iter().map(|c| (c.line, c.kind)).collect();
        assert_eq!(
            kinds,
            vec![(1, ChangeKind::ReasonChanged), (2, ChangeKind::Widened)]
        );
        assert!(r.records_changed[0].old.observed_only);
        assert_eq!(replay(&old, &new, "{\"table\": 1}\n").unwrap_err().line, 1);
    }
}
