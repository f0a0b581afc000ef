//! `run start|resume`: a run's stored state.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use toolgate_runtime::RunState;

use super::{did_you_mean, stored_run, Res, SourceArgs};
use crate::io::{write_out, Failure};

/// What a run starts from: the table, the configuration, the skills.
#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    src: SourceArgs,
    #[arg(long = "config", short = 'c')]
    config: String,
    /// Forced or invoked skills, besides the configuration's attached ones.
    #[arg(long = "skill")]
    skills: Vec<String>,
}

#[derive(Subcommand)]
pub enum RunCommand {
    /// Resolve a new run's stored state from its configuration and skills.
    Start(RunArgs),
    /// Resume a stored run: intersect its allow-list with the live one, union the exclusions.
    Resume {
        #[command(flatten)]
        run: RunArgs,
        /// The stored run state (JSON).
        stored: PathBuf,
    },
}

fn run_start(a: RunArgs, stored: Option<PathBuf>) -> Res {
    let (src, config, skills) = (a.src, a.config.as_str(), &a.skills);
    let table = src.load()?;
    let known = &table.spec().skills;
    if let Some(s) = skills.iter().find(|s| !known.iter().any(|k| &k.name == *s)) {
        return Err(Failure::Usage(format!(
            "unknown skill `{s}`{}",
            did_you_mean(s, known.iter().map(|k| k.name.as_str()))
        )));
    }
    let extra: Vec<&str> = skills.iter().map(String::as_str).collect();
    let live = RunState::start(&table, config, &extra)?;
    let state = match stored {
        None => live,
        Some(p) => stored_run(&p)?.resume(&live),
    };
    write_out(&format!("{}\n", state.to_json()));
    Ok(0)
}

pub fn run(c: RunCommand) -> Res {
    match c {
        RunCommand::Start(a) => run_start(a, None),
        RunCommand::Resume { run, stored } => run_start(run, Some(stored)),
    }
}
