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
    /// Check the configuration and exit (0 when valid): every start-time
    /// check that needs no upstream (the table, the configuration, the
    /// identity, the pins), connecting to no upstream.
    #[arg(long)]
    check: bool,
    /// Do not watch the table source for changes.
    #[arg(long)]
    no_watch: bool,
}

pub fn gateway(a: GatewayArgs) -> Res {
    let config =
        toolgate_gateway::Config::from_file(&a.config).map_err(|e| Failure::Usage(e.into()))?;
    if a.check {
        let line = toolgate_gateway::check(&config)
            .map_err(|e| Failure::Usage(format!("{}: {e}", a.config.display())))?;
        println!("{}: {line}", a.config.display());
        return Ok(0);
    }
    toolgate_gateway::run(config, !a.no_watch).map_err(|e| Failure::Usage(e.into()))?;
    Ok(0)
}
