//! Hover: what the registry says of a tool and how each configuration of the
//! compiled table answers for it (the runtime decides, as it would for a
//! host); a configuration's effective zone and what it offers.

use std::fmt::Write as _;

use toolgate_compiler::diagnostics::NameKind;
use toolgate_compiler::registry::Origin;
use toolgate_runtime::{Decision, Role, Table};

use crate::workspace::ProjectState;

fn answer(d: &Decision<'_>) -> String {
    match (d.allowed, d.reason) {
        (true, _) if d.observed_only => "offered (trust zone observed, not enforced)".into(),
        (true, _) => "offered".into(),
        (false, Some(r)) => format!("refused: `{}`, {}", r.code(), r.message()),
        (false, None) => "refused".into(),
    }
}

fn tool(state: &ProjectState, name: &str) -> String {
    let mut out = format!("**tool** `{name}`\n\n");
    match state
        .registry()
        .and_then(|r| r.tools.iter().find(|t| t.name == name))
    {
        Some(t) => {
            let origin = match &t.origin {
                Origin::Builtin => "builtin".to_string(),
                Origin::Remote { server } => format!("remote (MCP server `{server}`)"),
            };
            let _ = writeln!(
                out,
                "registry: group `{}`, {origin}, {} by default, {}, class {}",
                t.group,
                if t.enabled { "enabled" } else { "disabled" },
                if t.admin_only {
                    "admin-only"
                } else {
                    "not admin-only"
                },
                t.class
                    .as_deref()
                    .map(|c| format!("`{c}`"))
                    .unwrap_or_else(|| "not set".into()),
            );
            if let Some(d) = &t.description {
                let _ = writeln!(out, "\n{d}");
            }
        }
        None => {
            let _ = writeln!(out, "not in the registry");
        }
    }
    let Some(table) = state.table() else {
        out.push_str("\n(no compiled table: the project has not compiled without errors yet)\n");
        return out;
    };
    let spec = table.spec();
    if let Some(id) = table.tool_id(name) {
        let t = &spec.tools[id as usize];
        let _ = writeln!(
            out,
            "\ncompiled: {}, {}, class `{}`",
            if t.enabled { "enabled" } else { "disabled" },
            if t.admin_only {
                "admin-only"
            } else {
                "not admin-only"
            },
            spec.classes[t.class as usize]
        );
    }
    out.push_str(&decisions(table, name));
    out
}

/// One row per configuration: the answer for a user and for an admin.
fn decisions(table: &Table, name: &str) -> String {
    let mut out = String::from("\n| configuration | user | admin |\n| --- | --- | --- |\n");
    for c in table.configuration_names() {
        let Ok(ctx) = table.context(c) else { continue };
        let user = ctx.clone().role(Role::User).decide(name);
        let admin = ctx.role(Role::Admin).decide(name);
        let _ = writeln!(out, "| `{c}` | {} | {} |", answer(&user), answer(&admin));
    }
    out
}

fn configuration(state: &ProjectState, name: &str) -> String {
    let mut out = format!("**configuration** `{name}`\n\n");
    let Some(table) = state.table() else {
        out.push_str("(no compiled table: the project has not compiled without errors yet)\n");
        return out;
    };
    let spec = table.spec();
    let (Some(c), Ok(ctx)) = (table.configuration(name), table.context(name)) else {
        out.push_str("not in the last compiled table\n");
        return out;
    };
    let zone = &spec.zones[c.zone as usize];
    let _ = writeln!(
        out,
        "provider {}, effective zone `{}` (ceiling `{}`)\n",
        c.provider
            .as_deref()
            .map(|p| format!("`{p}`"))
            .unwrap_or_else(|| "none (least trusted zone)".into()),
        zone.name,
        spec.classes[zone.ceiling as usize]
    );
    let users = ctx.clone().role(Role::User).offered_count();
    let admins = ctx.role(Role::Admin).offered_count();
    let _ = writeln!(
        out,
        "offers {users} of {} tools to users, {admins} to admins",
        table.tool_count()
    );
    out
}

fn zone(state: &ProjectState, name: &str) -> Option<String> {
    let table = state.table()?;
    let spec = table.spec();
    let z = spec.zones.iter().find(|z| z.name == name)?;
    Some(format!(
        "**zone** `{name}`\n\nceiling `{}`: refuses tools classed above it\n",
        spec.classes[z.ceiling as usize]
    ))
}

/// Any other name: where it is defined and how often it is used.
fn generic(state: &ProjectState, kind: NameKind, name: &str) -> String {
    let uses = state.index.of(kind, name).filter(|o| !o.def).count();
    format!(
        "**{}** `{name}`\n\n{uses} reference{} in the project\n",
        kind.as_str(),
        if uses == 1 { "" } else { "s" }
    )
}

pub fn hover(state: &ProjectState, kind: NameKind, name: &str) -> String {
    match kind {
        NameKind::Tool => tool(state, name),
        NameKind::Configuration => configuration(state, name),
        NameKind::Zone => zone(state, name).unwrap_or_else(|| generic(state, kind, name)),
        _ => generic(state, kind, name),
    }
}
