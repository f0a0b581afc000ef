//! The shared table of a size and the runtime's answers on it, written once
//! by `gen` and read by every host path (C, Python and PHP read the TSV
//! too): `name \t allowed (0|1) \t reason code or - \t listed (0|1)`, one
//! line per tool in registry order; `listed` = on the unavailable list.

use std::path::{Path, PathBuf};

use toolgate_runtime::{Context, Reason, Role, Table};

/// The context every path times: `config0`, a non-admin user, consumer `k0`.
pub const CONFIGURATION: &str = "config0";
pub const CONSUMER: &str = "k0";

pub struct Tool {
    pub name: String,
    pub allowed: bool,
    pub reason: Option<Reason>,
    pub listed: bool,
}

pub fn table_path(dir: &Path, n: usize) -> PathBuf {
    dir.join(format!("t{n}.tgt"))
}

fn tsv_path(dir: &Path, n: usize) -> PathBuf {
    dir.join(format!("t{n}.tools.tsv"))
}

pub fn context(table: &Table) -> Result<Context<'_>, String> {
    Ok(table
        .context(CONFIGURATION)
        .map_err(|e| e.to_string())?
        .role(Role::User)
        .consumer(Some(CONSUMER)))
}

/// Generate the workload, compile it, write the table and the runtime's answers.
pub fn write(dir: &Path, n: usize) -> Result<(), String> {
    let w = toolgate_bench::generate(n, 10, 42);
    let m = toolgate_reference::model(&w.registry, &[&w.policy]);
    let bytes = toolgate_compiler::lower::compile(&m);
    let table = Table::load(&bytes).map_err(|e| format!("the generated table: {e}"))?;
    let ctx = context(&table)?;
    let mut listed = vec![false; table.tool_count()];
    let mut reasons = vec![None; table.tool_count()];
    ctx.for_each_unavailable_id(|i, r| {
        listed[i as usize] = true;
        reasons[i as usize] = Some(r);
    });
    let mut tsv = String::with_capacity(n * 40);
    for (i, on_list) in listed.iter().enumerate() {
        let name = table.tool_name(i as u32);
        let d = ctx.decide(name);
        if *on_list && (d.allowed || d.reason != reasons[i]) {
            return Err(format!(
                "{name}: listed as {:?} but decided {d:?}",
                reasons[i]
            ));
        }
        tsv.push_str(&format!(
            "{name}\t{}\t{}\t{}\n",
            u8::from(d.allowed),
            d.reason.map_or("-", Reason::code),
            u8::from(*on_list)
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let write =
        |p: PathBuf, b: &[u8]| std::fs::write(&p, b).map_err(|e| format!("{}: {e}", p.display()));
    write(table_path(dir, n), &bytes)?;
    write(tsv_path(dir, n), tsv.as_bytes())?;
    eprintln!(
        "{n} tools: {} unavailable to {CONFIGURATION}/user/{CONSUMER}, {} allowed",
        listed.iter().filter(|x| **x).count(),
        tsv.lines()
            .filter(|l| l.split('\t').nth(1) == Some("1"))
            .count()
    );
    Ok(())
}

/// The table's bytes and the runtime's answers, as `write` left them.
pub fn read(dir: &Path, n: usize) -> Result<(Vec<u8>, Vec<Tool>), String> {
    let p = table_path(dir, n);
    let bytes = std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    let p = tsv_path(dir, n);
    let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    let tools = text
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let bad = || {
                format!(
                    "{}:{}: not `name allowed reason listed`",
                    p.display(),
                    i + 1
                )
            };
            let [name, allowed, reason, listed] = line.split('\t').collect::<Vec<_>>()[..] else {
                return Err(bad());
            };
            Ok(Tool {
                name: name.to_string(),
                allowed: allowed == "1",
                reason: match reason {
                    "-" => None,
                    r => Some(Reason::from_code(r).ok_or_else(bad)?),
                },
                listed: listed == "1",
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if tools.len() != n {
        return Err(format!(
            "{}: {} tools, expected {n}",
            p.display(),
            tools.len()
        ));
    }
    Ok((bytes, tools))
}

/// The tools in the order every host asks them: the benches' walk (a stride
/// of 7919 through the registry, which defeats the cache on purpose), one
/// pass = n tools.
pub fn strided<T>(items: &[T]) -> Vec<&T> {
    toolgate_bench::walk(items.len())
        .into_iter()
        .map(|i| &items[i])
        .collect()
}

/// The expected unavailable list: (name, reason) in registry order.
pub fn unavailable(tools: &[Tool]) -> Vec<(&str, Reason)> {
    tools
        .iter()
        .filter(|t| t.listed)
        .filter_map(|t| Some((t.name.as_str(), t.reason?)))
        .collect()
}
