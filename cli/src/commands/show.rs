//! `show`: readouts of a tool or a configuration.

use std::fmt::Write as _;

use clap::Subcommand;
use toolgate_compiler::readout::{ConfigReadout, ToolOrigin, ToolReadout};

use super::{did_you_mean, load_table, OutFormat, Res, SourceArgs};
use crate::io::{write_out, Failure};

#[derive(Subcommand)]
pub enum ShowCommand {
    /// A tool: group, data class, state, and the configurations that exclude it.
    Tool {
        name: String,
        #[command(flatten)]
        src: SourceArgs,
    },
    /// A configuration: groups, exclusions (stale ones marked), provider, zone, ceiling.
    Config {
        name: String,
        #[command(flatten)]
        src: SourceArgs,
    },
}

fn show_tool(name: &str, src: SourceArgs) -> Res {
    let table = load_table(&src.project, src.table.as_deref())?;
    let spec = table.spec();
    let Some(id) = table.tool_id(name) else {
        return Err(Failure::Usage(format!(
            "`{name}` is not a registered tool{}",
            did_you_mean(name, spec.tools.iter().map(|t| t.name.as_str()))
        )));
    };
    let t = &spec.tools[id as usize];
    let excluding = table.configurations_excluding(name);
    let group = &spec.groups[t.group as usize].name;
    let v = ToolReadout {
        tool: &t.name,
        group,
        origin: if t.remote {
            ToolOrigin::Remote
        } else {
            ToolOrigin::Builtin
        },
        enabled: t.enabled,
        admin_only: t.admin_only,
        class: &spec.classes[t.class as usize],
        excluded_by: excluding.clone(),
        descriptor_bytes: t.descriptor_bytes,
    };
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

fn show_config(name: &str, src: SourceArgs) -> Res {
    let table = load_table(&src.project, src.table.as_deref())?;
    let spec = table.spec();
    let c = table.configuration(name).ok_or_else(|| {
        Failure::Usage(format!(
            "unknown configuration `{name}`{}",
            did_you_mean(name, table.configuration_names())
        ))
    })?;
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
    let v = ConfigReadout {
        configuration: &c.name,
        file: &c.file,
        provider: c.provider.as_deref(),
        zone: &zone.name,
        ceiling: &spec.classes[zone.ceiling as usize],
        groups: groups.clone(),
        excluded: registered.clone(),
        no_longer_registered: stale.clone(),
        skills: skills.clone(),
    };
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

pub fn run(c: ShowCommand) -> Res {
    match c {
        ShowCommand::Tool { name, src } => show_tool(&name, src),
        ShowCommand::Config { name, src } => show_config(&name, src),
    }
}
