//! `show`: readouts of a tool or a configuration.

use clap::Subcommand;
use toolgate_review::readout::{ConfigReadout, ToolOrigin, ToolReadout};

use super::{did_you_mean, OutFormat, Res, SourceArgs};
use crate::grid::{fields, list_or_dash};
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
    /// Every configuration: provider, zone, groups, how many tools it excludes (and how many of those are gone).
    Configs {
        #[command(flatten)]
        src: SourceArgs,
    },
    /// Every registered tool with the configurations that exclude it (--excluded: only those some configuration excludes).
    Tools {
        /// Only the tools that at least one configuration excludes.
        #[arg(long)]
        excluded: bool,
        #[command(flatten)]
        src: SourceArgs,
    },
    /// Every configuration's exclusions, the names no longer registered listed apart.
    Exclusions {
        #[command(flatten)]
        src: SourceArgs,
    },
}

fn show_tool(name: &str, src: SourceArgs) -> Res {
    let table = src.load()?;
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
            let yes_no = |b: bool, yes: &str, no: &str| if b { yes } else { no }.to_string();
            write_out(&fields(&[
                ("tool", t.name.clone()),
                ("group", group.clone()),
                ("origin", yes_no(t.remote, "remote", "builtin")),
                ("state", yes_no(t.enabled, "enabled", "disabled")),
                ("admin-only", yes_no(t.admin_only, "yes", "no")),
                ("class", spec.classes[t.class as usize].clone()),
                ("excluded by", list_or_dash(&excluding)),
            ]));
        }
    }
    Ok(0)
}

fn show_config(name: &str, src: SourceArgs) -> Res {
    let table = src.load()?;
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
            let mut rows = vec![
                ("configuration", format!("{}  ({})", c.name, c.file)),
                (
                    "provider",
                    c.provider
                        .as_deref()
                        .unwrap_or("- (least trusted zone)")
                        .into(),
                ),
                ("zone", zone.name.clone()),
                ("ceiling", spec.classes[zone.ceiling as usize].clone()),
                ("groups", groups.map_or("all".into(), |g| g.join(", "))),
                ("excluded", list_or_dash(&registered)),
            ];
            if !stale.is_empty() {
                rows.push(("no longer registered", stale.join(", ")));
            }
            rows.push(("skills", list_or_dash(&skills)));
            write_out(&fields(&rows));
        }
    }
    Ok(0)
}

pub fn run(c: ShowCommand) -> Res {
    match c {
        ShowCommand::Tool { name, src } => show_tool(&name, src),
        ShowCommand::Config { name, src } => show_config(&name, src),
        ShowCommand::Configs { src } => bulk::configs(src),
        ShowCommand::Tools { excluded, src } => bulk::tools(src, excluded),
        ShowCommand::Exclusions { src } => bulk::exclusions(src),
    }
}

/// The readouts in bulk, for the screens where tools are managed
/// (docs/gate-semantics.md §6 rule 7): what every configuration excludes, and
/// who excludes every tool. All of it read from the compiled table, as
/// `show tool` and `show config` are.
mod bulk {
    use std::collections::BTreeMap;
    use std::fmt::Write as _;

    use serde::Serialize;
    use toolgate_review::readout::{ConfigRow, ExclusionRow, ToolRow};
    use toolgate_runtime::Table;

    use super::super::{OutFormat, Res, SourceArgs};
    use crate::grid::{grid, list_or_dash};
    use crate::io::write_out;

    fn config_rows(table: &Table) -> Vec<ConfigRow<'_>> {
        let spec = table.spec();
        spec.configurations
            .iter()
            .map(|c| {
                let (registered, stale) = table.exclusions_of(&c.name).unwrap_or_default();
                ConfigRow {
                    configuration: &c.name,
                    file: &c.file,
                    provider: c.provider.as_deref(),
                    zone: table.zone_name(c.zone),
                    groups: c.groups.as_ref().map(|g| {
                        g.iter()
                            .map(|&i| spec.groups[i as usize].name.as_str())
                            .collect()
                    }),
                    excluded: registered.len(),
                    no_longer_registered: stale.len(),
                }
            })
            .collect()
    }

    fn json(v: &impl Serialize) -> Res {
        write_out(&format!("{}\n", serde_json::to_string_pretty(v)?));
        Ok(0)
    }

    /// `1 tool`, `27 tools`, `1,375 tools`.
    fn count(n: usize, word: &str) -> String {
        let s = if n == 1 { "" } else { "s" };
        format!("{} {word}{s}", toolgate_compiler::report::thousands(n))
    }

    pub fn configs(src: SourceArgs) -> Res {
        let table = src.load()?;
        let rows = config_rows(&table);
        if src.format == OutFormat::Json {
            return json(&rows);
        }
        let cells = rows
            .iter()
            .map(|r| {
                vec![
                    r.configuration.to_string(),
                    r.provider.unwrap_or("-").to_string(),
                    r.zone.to_string(),
                    r.groups.as_deref().map_or("all".into(), list_or_dash),
                    r.excluded.to_string(),
                    r.no_longer_registered.to_string(),
                    r.file.to_string(),
                ]
            })
            .collect();
        let mut out = grid(
            &[
                "configuration",
                "provider",
                "zone",
                "groups",
                "excluded",
                "no longer registered",
                "file",
            ],
            &[4, 5],
            cells,
        );
        let _ = writeln!(out, "\n{}", count(rows.len(), "configuration"));
        write_out(&out);
        Ok(0)
    }

    pub fn tools(src: SourceArgs, only_excluded: bool) -> Res {
        let table = src.load()?;
        let spec = table.spec();
        // Invert every configuration's exclusions once: tools x configurations
        // lookups would be quadratic on a large registry.
        let mut by_tool: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for c in &spec.configurations {
            let (registered, _) = table.exclusions_of(&c.name).unwrap_or_default();
            for t in registered {
                by_tool.entry(t).or_default().push(&c.name);
            }
        }
        let rows: Vec<ToolRow> = spec
            .tools
            .iter()
            .map(|t| ToolRow {
                tool: &t.name,
                group: &spec.groups[t.group as usize].name,
                excluded_by: by_tool.remove(t.name.as_str()).unwrap_or_default(),
            })
            .filter(|r| !only_excluded || !r.excluded_by.is_empty())
            .collect();
        if src.format == OutFormat::Json {
            return json(&rows);
        }
        let excluded = rows.iter().filter(|r| !r.excluded_by.is_empty()).count();
        let cells = rows
            .iter()
            .map(|r| {
                vec![
                    r.tool.to_string(),
                    r.group.to_string(),
                    list_or_dash(&r.excluded_by),
                ]
            })
            .collect();
        let mut out = grid(&["tool", "group", "excluded by"], &[], cells);
        let _ = writeln!(
            out,
            "\n{}, {} excluded by at least one configuration",
            count(rows.len(), "tool"),
            toolgate_compiler::report::thousands(excluded)
        );
        write_out(&out);
        Ok(0)
    }

    pub fn exclusions(src: SourceArgs) -> Res {
        let table = src.load()?;
        let rows: Vec<ExclusionRow> = table
            .configuration_names()
            .map(|name| {
                let (excluded, no_longer_registered) =
                    table.exclusions_of(name).unwrap_or_default();
                ExclusionRow {
                    configuration: name,
                    excluded,
                    no_longer_registered,
                }
            })
            .collect();
        if src.format == OutFormat::Json {
            return json(&rows);
        }
        let mut out = String::new();
        for r in &rows {
            let _ = writeln!(out, "{}", r.configuration);
            let _ = writeln!(out, "  excluded              {}", list_or_dash(&r.excluded));
            if !r.no_longer_registered.is_empty() {
                let _ = writeln!(
                    out,
                    "  no longer registered  {}",
                    list_or_dash(&r.no_longer_registered)
                );
            }
        }
        let stale: usize = rows.iter().map(|r| r.no_longer_registered.len()).sum();
        let _ = writeln!(
            out,
            "\n{}, {}, {} no longer registered{}",
            count(rows.len(), "configuration"),
            count(
                rows.iter().map(|r| r.excluded.len()).sum::<usize>() + stale,
                "exclusion"
            ),
            toolgate_compiler::report::thousands(stale),
            if stale > 0 {
                " (TG1009: remove them, or keep them with `# toolgate: allow TG1009`)"
            } else {
                ""
            }
        );
        write_out(&out);
        Ok(0)
    }
}
