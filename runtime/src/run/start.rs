//! Starting a run: its allow-list and exclusions resolved from a table's
//! configuration at this moment (docs/gate-semantics.md §13). The run's
//! data and stored form are [`super::state`]; this is the one part of a
//! run that reads a table.

use super::state::{Exclusions, RunState};
use crate::table::Table;

/// Why a run could not be started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    UnknownConfiguration(String),
    UnknownSkill(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::UnknownConfiguration(c) => write!(f, "unknown configuration `{c}`"),
            RunError::UnknownSkill(s) => write!(f, "unknown skill `{s}`"),
        }
    }
}

impl std::error::Error for RunError {}

impl RunState {
    /// Resolve at run start: the allow-list is the union of the declarations
    /// of the configuration's attached skills and the forced and invoked ones
    /// (`extra_skills`); skills that declare nothing do not restrict. The
    /// exclusions are the configuration's at this moment.
    pub fn start(
        table: &Table,
        configuration: &str,
        extra_skills: &[&str],
    ) -> Result<RunState, RunError> {
        let spec = table.spec();
        let cfg = table
            .configuration(configuration)
            .ok_or_else(|| RunError::UnknownConfiguration(configuration.to_string()))?;
        let mut skills: Vec<u32> = cfg.skills.clone();
        for s in extra_skills {
            let i = *table
                .skill_index
                .get(*s)
                .ok_or_else(|| RunError::UnknownSkill(s.to_string()))?;
            if !skills.contains(&i) {
                skills.push(i);
            }
        }
        Ok(RunState {
            allowed: spec.allow_list_of(&skills),
            excluded: Exclusions::Names(cfg.excluded.clone()),
        })
    }
}
