//! `completions`: the shell completion script, generated from the same
//! argument definitions as `--help`.

use clap::{Args, CommandFactory};

use super::Res;
use crate::io::write_out;

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell: bash, elvish, fish, powershell or zsh.
    shell: clap_complete::Shell,
}

pub fn completions(a: CompletionsArgs) -> Res {
    let mut cmd = crate::Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "toolgate", &mut buf);
    write_out(&String::from_utf8_lossy(&buf));
    Ok(0)
}
