//! The console's simulation: one context, answered by the runtime as the
//! CLI answers it (`simulate`, `explain`, `unavailable --format json` and
//! `--format prompt`, `decide --refusal`).

use serde::{Deserialize, Serialize};
use toolgate_runtime::{Decision, Refusal, Role, RunState, Table, Unavailable};

use crate::review::Explained;

/// What the console asks.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SimulateRequest {
    pub configuration: String,
    /// `admin`, `user` (default) or `none`.
    #[serde(default)]
    pub role: Option<String>,
    #[serde(default)]
    pub consumer: Option<String>,
    /// The host's enforcement setting; only `observe` observes.
    #[serde(default)]
    pub enforcement: Option<String>,
    /// A stored run state, as `toolgate run start` writes it.
    #[serde(default)]
    pub run: Option<serde_json::Value>,
    /// Tools to explain gate by gate (and give the refusal of).
    #[serde(default)]
    pub tools: Vec<String>,
}

/// Why a simulation was not answered: always the caller's input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimulateError(pub String);

impl std::fmt::Display for SimulateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SimulateError {}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Simulation<'t> {
    pub digest: String,
    pub configuration: &'t str,
    pub role: &'static str,
    pub consumer: Option<String>,
    pub profile: Option<&'t str>,
    pub mode: &'static str,
    /// `toolgate simulate --format json`: every registered tool's decision,
    /// less the refused remote ones whose names this user may not see.
    pub decisions: Vec<Decision<'t>>,
    /// `toolgate explain --format json` for the asked tools.
    pub explain: Vec<Explained<'t>>,
    /// `decide --refusal` for each asked tool (`None`: offered).
    pub refusals: Vec<Option<Refusal>>,
    /// `toolgate unavailable --format json`, and as the model gets it.
    pub unavailable: Vec<Unavailable<'t>>,
    pub prompt: String,
}

/// Answer `req` from `table`.
pub fn simulate<'t>(
    table: &'t Table,
    req: &'t SimulateRequest,
) -> Result<Simulation<'t>, SimulateError> {
    let role = match req.role.as_deref() {
        None => Role::User,
        Some(r) => Role::from_name(r)
            .ok_or_else(|| SimulateError(format!("`role`: `{r}` is not admin, user or none")))?,
    };
    let mut ctx = table
        .context(&req.configuration)
        .map_err(|e| SimulateError(format!("`configuration`: {e}")))?
        .role(role)
        .consumer(req.consumer.as_deref())
        .enforcement(req.enforcement.as_deref());
    if let Some(run) = &req.run {
        let bytes = serde_json::to_vec(run).map_err(|e| SimulateError(e.to_string()))?;
        let state = RunState::parse(&bytes).map_err(|e| {
            SimulateError(format!("`run`: {e}; a run stored like this admits no tool"))
        })?;
        ctx = ctx.run(&state);
    }
    let decisions: Vec<Decision<'t>> = ctx.decisions().filter(|d| !ctx.hides(d)).collect();
    let explain = req
        .tools
        .iter()
        .map(|t| Explained::of(&ctx.shown_trace(t)))
        .collect();
    let refusals = req
        .tools
        .iter()
        .map(|t| ctx.refusal(&ctx.decide(t)))
        .collect();
    Ok(Simulation {
        digest: table.digest_hex(),
        configuration: ctx.configuration_name(),
        role: ctx.user_role().as_str(),
        consumer: ctx.consumer_name().map(str::to_string),
        profile: ctx.profile_name(),
        mode: ctx.mode().as_str(),
        decisions,
        explain,
        refusals,
        unavailable: ctx.unavailable(),
        prompt: ctx.unavailable_prompt(),
    })
}
