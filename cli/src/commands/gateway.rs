//! `gateway`: the governing MCP gateway (the `toolgate-gateway` library,
//! docs/gateway.md).

use std::path::PathBuf;

use clap::Args;

use super::Res;
use crate::io::Failure;

#[derive(Args)]
pub struct GatewayArgs {
    /// The gateway's configuration file (TOML; docs/gateway.md).
    #[arg(long, short = 'c', value_name = "FILE")]
    config: PathBuf,
    /// Check the configuration file and exit (0 when valid), connecting to nothing.
    #[arg(long)]
    check: bool,
    /// Do not watch the table source for changes.
    #[arg(long)]
    no_watch: bool,
}

pub fn gateway(a: GatewayArgs) -> Res {
    let config = toolgate_gateway::Config::from_file(&a.config).map_err(Failure::Usage)?;
    if a.check {
        println!("{}: valid", a.config.display());
        return Ok(0);
    }
    toolgate_gateway::run(config, !a.no_watch).map_err(Failure::Usage)?;
    Ok(0)
}
