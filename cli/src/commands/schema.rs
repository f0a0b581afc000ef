//! `schema`: the JSON Schemas of the JSON outputs (docs/schemas/), derived
//! from the types that are serialised (`crate::schemas`).

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::schemas::{self, Output, OUTPUTS};
use clap::Args;

use super::{did_you_mean, Res};
use crate::io::{write_atomic, write_out, Failure};

#[derive(Args)]
pub struct SchemaArgs {
    /// The output whose schema to print (`check`, `decide`, ...); none lists them.
    #[arg(conflicts_with = "all")]
    name: Option<String>,
    /// Every schema, one file each (NAME.schema.json) into the -o directory.
    #[arg(long, requires = "output")]
    all: bool,
    /// Write into this directory instead of printing.
    #[arg(short, long, value_name = "DIR")]
    output: Option<PathBuf>,
}

fn write(o: &Output, dir: &std::path::Path) -> Result<(), Failure> {
    write_atomic(&dir.join(o.file_name()), o.text().as_bytes())
}

pub fn schema(a: SchemaArgs) -> Res {
    let chosen: Vec<&Output> = match (&a.name, a.all) {
        (Some(name), _) => vec![schemas::find(name).ok_or_else(|| {
            Failure::Usage(format!(
                "no JSON output is named `{name}`{} (`toolgate schema` lists them)",
                did_you_mean(name, OUTPUTS.iter().map(|o| o.name))
            ))
        })?],
        (None, true) => OUTPUTS.iter().collect(),
        (None, false) => {
            let w = OUTPUTS.iter().map(|o| o.name.len()).max().unwrap_or(0);
            let mut out = String::new();
            for o in OUTPUTS {
                let _ = writeln!(out, "{:<w$}  {}", o.name, o.title);
            }
            write_out(&out);
            return Ok(0);
        }
    };
    match &a.output {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| Failure::Usage(format!("{}: {e}", dir.display())))?;
            for o in chosen {
                write(o, dir)?;
            }
        }
        None => {
            for o in chosen {
                write_out(&o.text());
            }
        }
    }
    Ok(0)
}
