//! The Rust side of `bench/scripts/hosts.sh` (every host path side by
//! side on one table per size). Subcommands:
//!
//! ```text
//! hosts gen DIR N...        write DIR/tN.tgt (generate(N, 10, 42)) and DIR/tN.tools.tsv
//! hosts rust DIR N          the runtime, in process
//! hosts cedar DIR N         Cedar's is_authorized on the same decisions
//! hosts regorus DIR N       Rego (Regorus's VM) on the same decisions
//! hosts casbin DIR N        Casbin's Enforcer on the same decisions
//! hosts http DIR N ADDR     the decision service (`toolgate serve`) at ADDR
//! ```
//!
//! Every timed part first checks that it agrees with the runtime's answers
//! in `tN.tools.tsv`, then prints `ROW path=.. op=decide|unavailable n=..
//! ns=.. iters=.. reps=..` lines (`HOSTS_QUICK=1`: short loops).

mod casbin_host;
mod cedar_host;
mod expected;
mod http_host;
mod regorus_host;
mod rust_host;
mod timing;

use std::path::PathBuf;

fn size(s: Option<&String>) -> Result<usize, String> {
    let s = s.ok_or("a tool count is required")?;
    s.parse()
        .map_err(|e| format!("tool count {s:?}: {e}"))
        .and_then(|n: usize| {
            if n == 0 {
                Err("tool count 0".into())
            } else {
                Ok(n)
            }
        })
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: hosts gen DIR N... | rust DIR N | cedar DIR N | regorus DIR N | casbin DIR N | http DIR N ADDR";
    let (cmd, dir) = match args.as_slice() {
        [cmd, dir, ..] => (cmd.as_str(), PathBuf::from(dir)),
        _ => return Err(usage.into()),
    };
    match cmd {
        "gen" => {
            for n in &args[2..] {
                expected::write(&dir, size(Some(n))?)?;
            }
            Ok(())
        }
        "rust" => rust_host::run(&dir, size(args.get(2))?),
        "cedar" => cedar_host::run(&dir, size(args.get(2))?),
        "regorus" => regorus_host::run(&dir, size(args.get(2))?),
        "casbin" => casbin_host::run(&dir, size(args.get(2))?),
        "http" => {
            let addr = args.get(3).ok_or("http needs ADDR (host:port)")?;
            http_host::run(&dir, size(args.get(2))?, addr)
        }
        _ => Err(usage.into()),
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("hosts: {e}");
        std::process::exit(1);
    }
}
