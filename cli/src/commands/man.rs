//! `man`: the man pages, generated from the same argument definitions as
//! `--help`.

use clap::{Args, CommandFactory};

use super::Res;
use crate::io::{write_atomic, write_out, Failure};

#[derive(Args)]
pub struct ManArgs {
    /// Write the pages (toolgate.1 and one toolgate-COMMAND.1 per command)
    /// into this directory instead of printing toolgate.1.
    #[arg(short, long)]
    output: Option<std::path::PathBuf>,
}

fn render(cmd: clap::Command, title: &str) -> Result<Vec<u8>, Failure> {
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd).title(title).render(&mut buf)?;
    Ok(buf)
}

pub fn man(a: ManArgs) -> Res {
    let cmd = crate::Cli::command();
    let Some(dir) = a.output else {
        write_out(&String::from_utf8_lossy(&render(cmd, "toolgate")?));
        return Ok(0);
    };
    std::fs::create_dir_all(&dir)?;
    write_atomic(&dir.join("toolgate.1"), &render(cmd.clone(), "toolgate")?)?;
    for sub in cmd.get_subcommands() {
        let name = format!("toolgate-{}", sub.get_name());
        let page = sub.clone().bin_name(format!("toolgate {}", sub.get_name()));
        write_atomic(&dir.join(format!("{name}.1")), &render(page, &name)?)?;
    }
    Ok(0)
}
