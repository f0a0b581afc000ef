//! The JSON Schemas of every JSON output of `toolgate` (feature `schema`),
//! derived with schemars from the types that are serialised, so a schema
//! cannot drift from what is printed. `toolgate schema` writes them;
//! docs/schemas/ holds them, checked against real outputs by the CLI tests.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value};
use toolgate_runtime::log::{LogRecord, LogStats, ServiceRecord};
use toolgate_runtime::{Classified, Decision, Refusal, RunState, ToolSet, Unavailable};

use toolgate_compiler::mcp_sync::SyncReport;
use toolgate_compiler::report::CheckReport;
use toolgate_review::diff::Diff;
use toolgate_review::policy_tests::Report;
use toolgate_review::readout::{
    ConfigReadout, ConfigRow, ExclusionRow, Explained, ToolReadout, ToolRow,
};
use toolgate_review::replay::DiffReplay;

/// Where the published schemas live; a schema's `$id` is this and its file name.
pub const BASE_URL: &str = "https://raw.githubusercontent.com/toolgate/toolgate/main/docs/schemas/";

/// One JSON output and its schema.
pub struct Output {
    /// The schema's name: `docs/schemas/NAME.schema.json`.
    pub name: &'static str,
    /// What prints it.
    pub title: &'static str,
    pub description: &'static str,
    root: fn(SchemaSettings) -> Schema,
}

fn root<T: JsonSchema>(settings: SchemaSettings) -> Schema {
    settings.into_generator().into_root_schema_for::<T>()
}

macro_rules! outputs {
    ($($name:literal, $ty:ty, $title:literal, $description:literal;)*) => {
        /// Every JSON output, in the order of the command list of docs/cli.md.
        pub const OUTPUTS: &[Output] = &[$(Output {
            name: $name,
            title: $title,
            description: $description,
            root: root::<$ty>,
        }),*];
    };
}

outputs! {
    "check", CheckReport,
        "toolgate check --format json",
        "Every diagnostic of every project checked, the counts in total and per project, and what suppressions hid.";
    "registry-sync", SyncReport<'static>,
        "toolgate registry sync --format json",
        "The tools an MCP server added, removed and changed against the registry, and the policy statements a removal leaves stale.";
    "decide", Decision<'static>,
        "toolgate decide --format json",
        "One tool's decision for one context: allowed, the first refusing gate, and the trust-zone facts when that gate was reached.";
    "refusal", Option<Refusal>,
        "toolgate decide --refusal",
        "The typed refusal of a refused tool (null when the tool is allowed): its kind, who can fix it, what the host should do, the text for the model and the fix.";
    "explain", Vec<Explained<'static>>,
        "toolgate explain --format json",
        "For each tool asked about, its decision and the gates it went through, in order, up to the first refusal.";
    "unavailable", Vec<Unavailable<'static>>,
        "toolgate unavailable --format json",
        "The registered tools a run will not be offered, and why.";
    "simulate", Vec<Decision<'static>>,
        "toolgate simulate --format json",
        "The decision of every registered tool (and every --live tool) for one context, as shown to its user.";
    "offered", ToolSet<'static>,
        "toolgate offered --format json",
        "The offered set for one context (discovery): the offered tools, what was held back and why, and the descriptor cost.";
    "classify", Classified,
        "toolgate classify",
        "A gateway's answer to a tool call, classified: success, a tool failure, or a typed refusal.";
    "drift", toolgate_runtime::drift::Drift,
        "toolgate drift --format json",
        "A consumer's access profile against its gateway's tools/list answer and the decision log.";
    "show-tool", ToolReadout<'static>,
        "toolgate show tool --format json",
        "A registered tool: group, origin, state, data class, the configurations that exclude it, its descriptor size.";
    "show-config", ConfigReadout<'static>,
        "toolgate show config --format json",
        "A configuration: provider, trust zone and ceiling, groups, exclusions (stale ones apart) and skills.";
    "show-configs", Vec<ConfigRow<'static>>,
        "toolgate show configs --format json",
        "Every configuration: provider, trust zone, allowed groups (null: every group), how many tools it excludes and how many of its exclusions name tools no longer registered.";
    "show-tools", Vec<ToolRow<'static>>,
        "toolgate show tools --format json",
        "Every registered tool (with --excluded, those some configuration excludes) and the configurations that exclude it.";
    "show-exclusions", Vec<ExclusionRow<'static>>,
        "toolgate show exclusions --format json",
        "Every configuration's exclusions: the registered tools, and apart the names no longer registered.";
    "run-state", RunState,
        "toolgate run start|resume",
        "A run's stored state, as a host stores it with the run and gives it back on resume.";
    "decision-log", LogRecord,
        "toolgate decide|simulate|offered --log FILE",
        "One line of the runtime's decision log (JSON lines), as an embedding host and --log write it (docs/decision-log.md).";
    "decision-log-service", ServiceRecord,
        "toolgate serve --decision-log FILE",
        "One line of the decision service's log (JSON lines), with OPA's decision-log field names (docs/decision-log.md).";
    "stats", LogStats,
        "toolgate stats --format json",
        "Refusals counted in a decision log, per reason and per configuration.";
    "diff", Diff,
        "toolgate diff --format json",
        "The semantic diff of two versions of a project over the whole decision space: widenings, narrowings and reason changes.";
    "diff-replay", DiffReplay<'static>,
        "toolgate diff --replay LOG --format json",
        "The semantic diff, and the decisions recorded in a log that the new version would change.";
    "test", Report,
        "toolgate test --format json",
        "The policy tests' results, the test files that could not be run, and the decision-table coverage.";
}

impl Output {
    /// The schema (JSON Schema 2020-12), with `$id`, title and description.
    pub fn schema(&self) -> Value {
        let schema = (self.root)(SchemaSettings::draft2020_12()).to_value();
        let mut out = Map::new();
        let mut rest = match schema {
            Value::Object(m) => m,
            other => return other,
        };
        out.insert(
            "$schema".into(),
            rest.remove("$schema").unwrap_or(Value::Null),
        );
        out.insert(
            "$id".into(),
            format!("{BASE_URL}{}.schema.json", self.name).into(),
        );
        out.insert("title".into(), self.title.into());
        out.insert("description".into(), self.description.into());
        rest.remove("title");
        rest.remove("description");
        out.extend(rest);
        Value::Object(out)
    }

    /// The schema as the file in docs/schemas/ holds it.
    pub fn text(&self) -> String {
        toolgate_compiler::report::pretty(&self.schema())
    }

    /// `docs/schemas/NAME.schema.json`'s file name.
    pub fn file_name(&self) -> String {
        format!("{}.schema.json", self.name)
    }
}

/// The output named `name`.
pub fn find(name: &str) -> Option<&'static Output> {
    OUTPUTS.iter().find(|o| o.name == name)
}
