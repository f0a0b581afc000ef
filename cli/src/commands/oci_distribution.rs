//! The OCI registry options `push`, `pull` and `serve --oci` share.

use clap::Args;
use toolgate_oci::DistributionOptions;

use crate::io::Failure;

/// How to reach the registry (shared by push, pull and serve --oci).
#[derive(Args, Clone)]
pub struct DistributionArgs {
    /// Speak plain HTTP (no TLS) to the reference's registry: a registry on
    /// this machine or a private network only.
    #[arg(long)]
    pub plain_http: bool,
    /// Seconds one push, pull or registry poll may take in all, every
    /// request of it included; past it the call is abandoned and reported.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub registry_timeout: u64,
}

impl DistributionArgs {
    /// The options for `reference`; credentials from
    /// TOOLGATE_REGISTRY_USERNAME and TOOLGATE_REGISTRY_PASSWORD (basic auth).
    pub fn options(&self, reference: &str) -> Result<DistributionOptions, Failure> {
        let plain_http = if self.plain_http {
            vec![toolgate_oci::host_of(reference).map_err(|e| Failure::Usage(e.into()))?]
        } else {
            Vec::new()
        };
        let basic_auth = match (
            std::env::var("TOOLGATE_REGISTRY_USERNAME"),
            std::env::var("TOOLGATE_REGISTRY_PASSWORD"),
        ) {
            (Ok(u), Ok(p)) => Some((u, p)),
            _ => None,
        };
        Ok(DistributionOptions {
            plain_http,
            basic_auth,
            deadline: std::time::Duration::from_secs(self.registry_timeout),
        })
    }
}
