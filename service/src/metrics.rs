//! Prometheus metrics (`GET /metrics`, OpenMetrics text), on the
//! `prometheus-client` crate (the Prometheus project's Rust client).

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Metric, Registry};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DecisionLabels {
    pub configuration: String,
    /// The reason code, or `allowed`.
    pub reason: String,
    /// `offer` or `call`.
    pub stage: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct EndpointLabels {
    pub endpoint: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StatusLabels {
    pub status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DigestLabels {
    pub digest: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ResultLabels {
    pub result: String,
}

/// The endpoints whose latency is measured, in [`Metrics::latency`] order.
pub const ENDPOINTS: [&str; 4] = [
    "evaluation",
    "evaluations",
    "search_resource",
    "unavailable",
];

pub struct Metrics {
    pub registry: Registry,
    pub decisions: Family<DecisionLabels, Counter>,
    /// One histogram per entry of [`ENDPOINTS`].
    pub latency: Vec<Histogram>,
    pub errors: Family<StatusLabels, Counter>,
    pub table_info: Family<DigestLabels, Gauge>,
    pub table_loaded: Gauge<f64, AtomicU64>,
    pub table_age: Gauge<f64, AtomicU64>,
    pub reloads: Family<ResultLabels, Counter>,
    pub reload_failures: Counter,
    pub last_reload_failed: Gauge,
    pub log_written: Counter,
    pub log_dropped: Counter,
    /// Connections closed at accept because `max_connections` were open.
    pub connections_refused: Counter,
    /// Registry polls (`--oci`) by result: `unchanged`, `swapped`,
    /// `refused`, `failed`, `timeout` (the poll passed its deadline).
    pub registry_polls: Family<ResultLabels, Counter>,
    /// How long the last registry poll took.
    pub registry_poll_seconds: Gauge<f64, AtomicU64>,
}

fn latency_histogram() -> Histogram {
    // 20 µs to about 0.65 s.
    Histogram::new(exponential_buckets(0.000_02, 2.0, 16))
}

/// A new metric registered under `name`: the registry keeps one handle to
/// it for `/metrics`, the service updates the one returned.
fn register<M: Metric + Clone + Default>(registry: &mut Registry, name: &str, help: &str) -> M {
    let metric = M::default();
    registry.register(name, help, metric.clone());
    metric
}

/// One latency histogram per entry of [`ENDPOINTS`], all in one family.
fn register_latency(registry: &mut Registry) -> Vec<Histogram> {
    let latency_family = Family::<EndpointLabels, Histogram>::new_with_constructor(
        latency_histogram as fn() -> Histogram,
    );
    registry.register(
        "request_duration_seconds",
        "Time to answer a decision request, from its body read to its answer",
        latency_family.clone(),
    );
    ENDPOINTS
        .iter()
        .map(|e| {
            latency_family
                .get_or_create(&EndpointLabels {
                    endpoint: e.to_string(),
                })
                .clone()
        })
        .collect()
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("toolgate");
        let r = &mut registry;
        // The fields are registered in the order written, which is the order
        // `/metrics` lists them in.
        let decisions = register(
            r,
            "decisions",
            "Decisions by configuration, reason (or allowed) and stage (offer or call)",
        );
        let latency = register_latency(r);
        let errors = register(
            r,
            "request_errors",
            "Requests answered with an error, by HTTP status",
        );
        let table_info = register(r, "table_info", "The table being served (1 for its digest)");
        let table_loaded = register(
            r,
            "table_loaded_timestamp_seconds",
            "When the table being served was put in place (Unix time)",
        );
        let table_age = register(
            r,
            "table_age_seconds",
            "Seconds since the table being served was put in place",
        );
        let reloads = register(
            r,
            "reloads",
            "Reload attempts by result (swapped, unchanged, failed)",
        );
        let reload_failures = register(
            r,
            "reload_failures",
            "Reloads whose table failed to load (the current table stayed)",
        );
        let last_reload_failed = register(
            r,
            "last_reload_failed",
            "1 while the last reload failed (the service is then not ready)",
        );
        let log_written = register(r, "decision_log_records", "Decision log records written");
        let log_dropped = register(
            r,
            "decision_log_dropped",
            "Decision log records dropped because the log buffer was full",
        );
        let connections_refused = register(
            r,
            "connections_refused",
            "Connections closed when accepted because the connection limit was reached",
        );
        let registry_polls = register(
            r,
            "registry_polls",
            "Registry polls (serve --oci) by result (unchanged, swapped, refused, failed, timeout)",
        );
        let registry_poll_seconds = register(
            r,
            "registry_poll_duration_seconds",
            "How long the last registry poll took (at most the registry deadline)",
        );
        Metrics {
            registry_polls,
            registry_poll_seconds,
            connections_refused,
            registry,
            decisions,
            latency,
            errors,
            table_info,
            table_loaded,
            table_age,
            reloads,
            reload_failures,
            last_reload_failed,
            log_written,
            log_dropped,
        }
    }
}

impl Metrics {
    /// `toolgate_otel_dropped_spans_total` and `_logs_total`: what the OTLP
    /// collector refused or never took (crate::telemetry), when export is
    /// on. The counters are the exporters' own: one count, two readers.
    pub fn register_otel(&mut self, dropped: &crate::telemetry::Dropped) {
        self.registry.register(
            "otel_dropped_spans",
            "Spans the OTLP collector refused or never took",
            dropped.spans.clone(),
        );
        self.registry.register(
            "otel_dropped_logs",
            "Decision log records the OTLP collector refused or never took",
            dropped.logs.clone(),
        );
    }

    /// The digest gauge now names `digest` only.
    pub fn set_table(&self, old: Option<&str>, digest: &str, loaded_unix_s: f64) {
        if let Some(old) = old {
            self.table_info.remove(&DigestLabels {
                digest: old.to_string(),
            });
        }
        self.table_info
            .get_or_create(&DigestLabels {
                digest: digest.to_string(),
            })
            .set(1);
        self.table_loaded.set(loaded_unix_s);
    }

    pub fn reload(&self, result: &str) {
        self.reloads
            .get_or_create(&ResultLabels {
                result: result.to_string(),
            })
            .inc();
    }

    pub fn registry_poll(&self, result: &str) {
        self.registry_polls
            .get_or_create(&ResultLabels {
                result: result.to_string(),
            })
            .inc();
    }

    pub fn error(&self, status: u16) {
        self.errors
            .get_or_create(&StatusLabels {
                status: status.to_string(),
            })
            .inc();
    }

    /// The text exposition, with the table's age brought up to date.
    pub fn encode(&self, now_unix_s: f64) -> String {
        self.table_age
            .set((now_unix_s - self.table_loaded.get()).max(0.0));
        let mut out = String::new();
        // Encoding into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
