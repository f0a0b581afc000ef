//! The gateway's own Prometheus metrics, beside the service's
//! (`toolgate_decisions_total` with `stage` offer/call, reloads, the log):
//! what the upstreams list and what of it is never offered.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct UpstreamLabels {
    pub upstream: String,
}

/// An MCP operation's labels, as OpenTelemetry's `mcp.*.operation.duration`
/// has them (docs/observability.md): the method, and the error's type
/// (empty on success). No tool names: the cardinality stays the methods'.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OperationLabels {
    pub method: String,
    pub error_type: String,
}

/// The MCP conventions' buckets, in seconds: OpenTelemetry's own.
fn operation_histogram() -> Histogram {
    Histogram::new(toolgate_service::telemetry::DURATION_BUCKETS)
}

pub struct GatewayMetrics {
    registry: Registry,
    listed: Gauge,
    unregistered: Gauge,
    changed: Gauge,
    withheld_prompts: Gauge,
    upstream_errors: Family<UpstreamLabels, Counter>,
    upstream_restarts: Family<UpstreamLabels, Counter>,
    events_dropped: Counter,
    server_operations: Family<OperationLabels, Histogram, fn() -> Histogram>,
    client_operations: Family<OperationLabels, Histogram, fn() -> Histogram>,
}

impl Default for GatewayMetrics {
    fn default() -> GatewayMetrics {
        let mut registry = Registry::default();
        let listed = Gauge::default();
        let unregistered = Gauge::default();
        let changed = Gauge::default();
        let withheld_prompts = Gauge::default();
        let upstream_errors = Family::<UpstreamLabels, Counter>::default();
        let upstream_restarts = Family::<UpstreamLabels, Counter>::default();
        let events_dropped = Counter::default();
        let server_operations =
            Family::new_with_constructor(operation_histogram as fn() -> Histogram);
        let client_operations =
            Family::new_with_constructor(operation_histogram as fn() -> Histogram);
        registry.register(
            "toolgate_gateway_mcp_server_operation_duration_seconds",
            "How long the gateway took to answer an MCP request, by method and error type (mcp.server.operation.duration)",
            server_operations.clone(),
        );
        registry.register(
            "toolgate_gateway_mcp_client_operation_duration_seconds",
            "How long an upstream took to answer a request the gateway sent, by method and error type (mcp.client.operation.duration)",
            client_operations.clone(),
        );
        registry.register(
            "toolgate_gateway_events_dropped",
            "Upstream log messages and resource updates a session was too slow to take",
            events_dropped.clone(),
        );
        registry.register(
            "toolgate_gateway_upstream_restarts",
            "Upstreams started again after they went down, by upstream",
            upstream_restarts.clone(),
        );
        registry.register(
            "toolgate_gateway_listed_tools",
            "Tools the upstreams list (mapped to registry names)",
            listed.clone(),
        );
        registry.register(
            "toolgate_gateway_unregistered_tools",
            "Listed tools the registry does not hold: never offered",
            unregistered.clone(),
        );
        registry.register(
            "toolgate_gateway_changed_definitions",
            "Listed tools whose definition is not the pinned one: withheld",
            changed.clone(),
        );
        registry.register(
            "toolgate_gateway_withheld_prompts",
            "Listed prompts the registry does not pin as listed (new or changed): withheld",
            withheld_prompts.clone(),
        );
        registry.register(
            "toolgate_gateway_upstream_errors",
            "Failed upstream listings, by upstream",
            upstream_errors.clone(),
        );
        GatewayMetrics {
            registry,
            listed,
            unregistered,
            changed,
            withheld_prompts,
            upstream_errors,
            upstream_restarts,
            events_dropped,
            server_operations,
            client_operations,
        }
    }
}

impl GatewayMetrics {
    pub fn set_listed(&self, listed: usize, unregistered: usize, changed: usize) {
        self.listed.set(listed as i64);
        self.unregistered.set(unregistered as i64);
        self.changed.set(changed as i64);
    }

    pub fn set_withheld_prompts(&self, n: usize) {
        self.withheld_prompts.set(n as i64);
    }

    pub fn upstream_error(&self, upstream: &str) {
        self.upstream_errors
            .get_or_create(&UpstreamLabels {
                upstream: upstream.to_string(),
            })
            .inc();
    }

    pub fn upstream_restart(&self, upstream: &str) {
        self.upstream_restarts
            .get_or_create(&UpstreamLabels {
                upstream: upstream.to_string(),
            })
            .inc();
    }

    /// An MCP operation's duration: the one measurement OpenTelemetry
    /// exports too (`Operation::end`).
    pub fn operation(
        &self,
        client: bool,
        method: &str,
        error_type: Option<&str>,
        took: std::time::Duration,
    ) {
        let family = if client {
            &self.client_operations
        } else {
            &self.server_operations
        };
        family
            .get_or_create(&OperationLabels {
                method: method.to_string(),
                error_type: error_type.unwrap_or_default().to_string(),
            })
            .observe(took.as_secs_f64());
    }

    pub fn events_dropped(&self, n: u64) {
        self.events_dropped.inc_by(n);
    }

    /// The service's exposition with these metrics added before its `# EOF`.
    pub fn encode_after(&self, service: &str) -> String {
        let mut own = String::new();
        let _ = prometheus_client::encoding::text::encode_registry(&mut own, &self.registry);
        let head = service.strip_suffix("# EOF\n").unwrap_or(service);
        format!("{head}{own}# EOF\n")
    }
}
