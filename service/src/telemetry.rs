//! OpenTelemetry from both fronts (docs/observability.md): traces after the
//! semantic conventions for MCP (a SERVER span per request a client sends,
//! a CLIENT span per request sent on to an upstream), each decision as a
//! `gen_ai.security.finding` event, the MCP operation durations and the
//! decision counter as metrics, and the decision log as log records, all
//! over OTLP (HTTP with protobuf, or gRPC).
//!
//! Off unless asked for: [`TelemetryConfig::from_env`] turns it on when an
//! OTLP endpoint is given by the standard variables
//! (`OTEL_EXPORTER_OTLP_ENDPOINT` or a per-signal one), or by the front's
//! own setting. The SDK batches on threads of its own, each queue bounded
//! (2,048 spans, 2,048 log records, metrics every
//! `OTEL_METRIC_EXPORT_INTERVAL` ms); a decision only enqueues, so a slow or
//! absent collector never holds one. What the collector refuses or never
//! takes is dropped and counted (`toolgate_otel_dropped_total{signal}`).
//!
//! **Nothing hidden leaks**: a tool's name goes into a span only when the
//! caller may see it ([`Telemetry::tool_name`]), unless the operator sets
//! `true_names` (the decision log keeps true names either way). Arguments
//! go into a span only with `record_arguments`. Metrics carry no tool names
//! at all (their cardinality stays that of the methods and reasons).

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, LoggerProvider as _, Severity};
use opentelemetry::metrics::{Histogram, MeterProvider as _};
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::Context;
pub use opentelemetry::KeyValue;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::logs::{SdkLogger, SdkLoggerProvider};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use opentelemetry_sdk::Resource;

use crate::Error;

/// How spans, metrics and logs reach the collector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtlpProtocol {
    /// OTLP/HTTP with protobuf bodies (`http/protobuf`, the default).
    HttpProtobuf,
    /// OTLP/gRPC (`grpc`).
    Grpc,
}

impl OtlpProtocol {
    /// `OTEL_EXPORTER_OTLP_PROTOCOL`'s values.
    pub fn parse(text: &str) -> Result<OtlpProtocol, Error> {
        match text {
            "http/protobuf" => Ok(OtlpProtocol::HttpProtobuf),
            "grpc" => Ok(OtlpProtocol::Grpc),
            other => Err(Error::Telemetry(format!(
                "OTLP protocol `{other}` is not supported: use `http/protobuf` or `grpc`"
            ))),
        }
    }
}

/// What to export, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelemetryConfig {
    /// The collector's base address (`http://127.0.0.1:4318` for HTTP,
    /// `http://127.0.0.1:4317` for gRPC); `None` with `enabled`: the
    /// standard variables name it.
    pub endpoint: Option<String>,
    pub protocol: OtlpProtocol,
    /// `service.name` when neither `OTEL_SERVICE_NAME` nor
    /// `OTEL_RESOURCE_ATTRIBUTES` gives one.
    pub service_name: String,
    pub enabled: bool,
    /// Tool names the caller may not see go into spans too.
    pub true_names: bool,
    /// A call's arguments go into its span (`gen_ai.tool.call.arguments`).
    pub record_arguments: bool,
}

const ENDPOINT_VARS: [&str; 4] = [
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
];

impl TelemetryConfig {
    /// From the standard environment: on when an OTLP endpoint variable is
    /// set and `OTEL_SDK_DISABLED` is not `true`; the protocol from
    /// `OTEL_EXPORTER_OTLP_PROTOCOL`.
    pub fn from_env(service_name: &str) -> Result<TelemetryConfig, Error> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let disabled = var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let protocol = match var("OTEL_EXPORTER_OTLP_PROTOCOL") {
            Some(p) => OtlpProtocol::parse(&p)?,
            None => OtlpProtocol::HttpProtobuf,
        };
        Ok(TelemetryConfig {
            endpoint: None,
            protocol,
            service_name: service_name.to_string(),
            enabled: !disabled && ENDPOINT_VARS.iter().any(|k| var(k).is_some()),
            true_names: false,
            record_arguments: false,
        })
    }
}

/// Items the collector refused or never took, by signal (exposed as
/// `toolgate_otel_dropped_total{signal}`).
#[derive(Debug, Default)]
pub struct Dropped {
    pub spans: Counter<u64, AtomicU64>,
    pub logs: Counter<u64, AtomicU64>,
}

type Counter<N, A> = prometheus_client::metrics::counter::Counter<N, A>;

struct Inner {
    tracer: SdkTracer,
    logger: SdkLogger,
    server_duration: Histogram<f64>,
    client_duration: Histogram<f64>,
    decisions: opentelemetry::metrics::Counter<u64>,
    traces: SdkTracerProvider,
    meters: SdkMeterProvider,
    logs: SdkLoggerProvider,
}

/// The front's telemetry: every method is a no-op when it is off.
#[derive(Clone, Default)]
pub struct Telemetry {
    inner: Option<Arc<Inner>>,
    pub dropped: Arc<Dropped>,
    pub true_names: bool,
    pub record_arguments: bool,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("on", &self.inner.is_some())
            .finish()
    }
}

/// The MCP conventions' buckets for operation durations, in seconds.
pub const DURATION_BUCKETS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

impl Telemetry {
    /// Telemetry that exports nothing.
    pub fn off() -> Telemetry {
        Telemetry::default()
    }

    /// Start exporting as `config` says. Call it inside the front's tokio
    /// runtime (gRPC needs it); the exporters' clients are made on a
    /// thread of their own.
    pub fn start(config: &TelemetryConfig) -> Result<Telemetry, Error> {
        if !config.enabled {
            return Ok(Telemetry {
                true_names: config.true_names,
                record_arguments: config.record_arguments,
                ..Telemetry::default()
            });
        }
        let dropped = Arc::new(Dropped::default());
        let failed = |what: &str, e: &dyn std::fmt::Display| {
            Error::Telemetry(format!("cannot start the OTLP {what} exporter: {e}"))
        };
        let resource = resource(&config.service_name);
        let endpoint = |path: &str| {
            config
                .endpoint
                .as_deref()
                .map(|base| match config.protocol {
                    OtlpProtocol::HttpProtobuf => format!("{}{path}", base.trim_end_matches('/')),
                    OtlpProtocol::Grpc => base.to_string(),
                })
        };
        macro_rules! exporter {
            ($builder:expr, $path:expr) => {{
                let at = endpoint($path);
                match config.protocol {
                    OtlpProtocol::HttpProtobuf => {
                        let mut b = $builder
                            .with_http()
                            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary);
                        if let Some(at) = at {
                            b = b.with_endpoint(at);
                        }
                        b.build()
                    }
                    OtlpProtocol::Grpc => {
                        let mut b = $builder.with_tonic();
                        if let Some(at) = at {
                            b = b.with_endpoint(at);
                        }
                        b.build()
                    }
                }
            }};
        }
        let spans = exporter!(opentelemetry_otlp::SpanExporter::builder(), "/v1/traces")
            .map_err(|e| failed("trace", &e))?;
        let metrics = exporter!(opentelemetry_otlp::MetricExporter::builder(), "/v1/metrics")
            .map_err(|e| failed("metric", &e))?;
        let logs = exporter!(opentelemetry_otlp::LogExporter::builder(), "/v1/logs")
            .map_err(|e| failed("log", &e))?;
        let traces = SdkTracerProvider::builder()
            .with_resource(resource.clone())
            .with_batch_exporter(counting::Spans {
                inner: spans,
                dropped: dropped.clone(),
            })
            .build();
        let meters = SdkMeterProvider::builder()
            .with_resource(resource.clone())
            .with_periodic_exporter(metrics)
            .build();
        let log_provider = SdkLoggerProvider::builder()
            .with_resource(resource)
            .with_batch_exporter(counting::Logs {
                inner: logs,
                dropped: dropped.clone(),
            })
            .build();
        let scope = "toolgate";
        let meter = meters.meter(scope);
        let duration = |name: &'static str, what: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(what)
                .with_boundaries(DURATION_BUCKETS.to_vec())
                .build()
        };
        let inner = Inner {
            tracer: traces.tracer(scope),
            logger: log_provider.logger(scope),
            server_duration: duration(
                "mcp.server.operation.duration",
                "How long the gateway took to answer an MCP request",
            ),
            client_duration: duration(
                "mcp.client.operation.duration",
                "How long an upstream took to answer an MCP request the gateway sent",
            ),
            decisions: meter
                .u64_counter("toolgate.decisions")
                .with_description("Tool decisions by stage, reason and configuration")
                .build(),
            traces,
            meters,
            logs: log_provider,
        };
        Ok(Telemetry {
            inner: Some(Arc::new(inner)),
            dropped,
            true_names: config.true_names,
            record_arguments: config.record_arguments,
        })
    }

    /// Whether anything is exported.
    pub fn is_on(&self) -> bool {
        self.inner.is_some()
    }

    /// A tool's name as telemetry may carry it: only when the caller may
    /// see it (`name_visible`), or the operator asked for true names.
    pub fn tool_name<'n>(&self, name: &'n str, name_visible: bool) -> Option<&'n str> {
        (name_visible || self.true_names).then_some(name)
    }

    /// A request a client sent: a SERVER span named `{method} {target}`,
    /// continuing the client's trace (`carrier`: its `traceparent` and
    /// `tracestate`), with `attributes`.
    pub fn server(
        &self,
        method: &str,
        target: Option<&str>,
        carrier: &HashMap<String, String>,
        attributes: Vec<KeyValue>,
    ) -> Operation {
        let parent = TraceContextPropagator::new().extract(carrier);
        self.operation(SpanKind::Server, method, target, &parent, attributes)
    }

    /// An HTTP request to `route` (`serve`'s AuthZEN API): a SERVER span
    /// `POST {route}`, continuing the caller's trace (its `traceparent`
    /// header); no MCP duration.
    pub fn http_server(&self, route: &str, headers: &axum::http::HeaderMap) -> Operation {
        let Some(inner) = &self.inner else {
            return Operation::default();
        };
        let parent = TraceContextPropagator::new().extract(&carrier(|_| None, Some(headers)));
        let attributes = vec![
            KeyValue::new("http.request.method", "POST"),
            KeyValue::new("http.route", route.to_string()),
        ];
        let span = inner
            .tracer
            .span_builder(format!("POST {route}"))
            .with_kind(SpanKind::Server)
            .with_attributes(attributes)
            .start_with_context(&inner.tracer, &parent);
        Operation {
            on: Some(Running {
                cx: parent.with_span(span),
                inner: inner.clone(),
                client: false,
                metric: None,
            }),
            started: Instant::now(),
        }
    }

    fn operation(
        &self,
        kind: SpanKind,
        method: &str,
        target: Option<&str>,
        parent: &Context,
        mut attributes: Vec<KeyValue>,
    ) -> Operation {
        let Some(inner) = &self.inner else {
            return Operation::default();
        };
        let name = match target {
            Some(t) => format!("{method} {t}"),
            None => method.to_string(),
        };
        attributes.push(KeyValue::new("mcp.method.name", method.to_string()));
        let metric = Some(vec![KeyValue::new("mcp.method.name", method.to_string())]);
        let span = inner
            .tracer
            .span_builder(name)
            .with_kind(kind.clone())
            .with_attributes(attributes)
            .start_with_context(&inner.tracer, parent);
        Operation {
            on: Some(Running {
                cx: parent.with_span(span),
                inner: inner.clone(),
                client: kind == SpanKind::Client,
                metric,
            }),
            started: Instant::now(),
        }
    }

    /// Count `n` decisions (the OTLP side of `toolgate_decisions_total`).
    pub fn count_decisions(&self, stage: &str, reason: &str, configuration: &str, n: u64) {
        if let Some(inner) = &self.inner {
            inner.decisions.add(
                n,
                &[
                    KeyValue::new("toolgate.stage", stage.to_string()),
                    KeyValue::new("toolgate.reason", reason.to_string()),
                    KeyValue::new("toolgate.configuration", configuration.to_string()),
                ],
            );
        }
    }

    /// A decision log record as an OTLP log record: its JSON as the body,
    /// event name `toolgate.decision`.
    pub fn log_decision(&self, json: &str, decision_id: &str, allowed: bool) {
        if let Some(inner) = &self.inner {
            let mut r = inner.logger.create_log_record();
            r.set_event_name("toolgate.decision");
            r.set_severity_number(Severity::Info);
            r.set_severity_text("INFO");
            r.set_body(AnyValue::from(json.to_string()));
            r.add_attribute("toolgate.decision_id", decision_id.to_string());
            r.add_attribute("toolgate.allowed", allowed);
            inner.logger.emit(r);
        }
    }

    /// Export what is queued and stop (at shutdown), within `timeout` per
    /// signal. Blocking: run it off the async threads.
    pub fn shutdown(&self, timeout: Duration) {
        if let Some(inner) = &self.inner {
            let _ = inner.traces.shutdown_with_timeout(timeout);
            let _ = inner.meters.shutdown_with_timeout(timeout);
            let _ = inner.logs.shutdown_with_timeout(timeout);
        }
    }

    /// Export what is queued now (tests, and before a reload's report).
    pub fn flush(&self) {
        if let Some(inner) = &self.inner {
            let _ = inner.traces.force_flush();
            let _ = inner.meters.force_flush();
            let _ = inner.logs.force_flush();
        }
    }
}

/// The resource: the SDK's (with `OTEL_SERVICE_NAME` and
/// `OTEL_RESOURCE_ATTRIBUTES`), and `service_name` when neither names one.
fn resource(service_name: &str) -> Resource {
    let named = std::env::var("OTEL_SERVICE_NAME").is_ok_and(|v| !v.is_empty())
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|v| {
            v.split(',')
                .any(|kv| kv.trim().starts_with("service.name="))
        });
    let b = Resource::builder();
    if named {
        b.build()
    } else {
        b.with_service_name(service_name.to_string()).build()
    }
}

/// How a decision came out, for `gen_ai.security.decision.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionType {
    Allow,
    Deny,
    /// Let through by observe mode: what would have been refused.
    Audit,
}

impl DecisionType {
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionType::Allow => "allow",
            DecisionType::Deny => "deny",
            DecisionType::Audit => "audit",
        }
    }
}

/// One decision, as a `gen_ai.security.finding` event.
#[derive(Debug, Clone)]
pub struct Finding<'a> {
    pub decision: DecisionType,
    /// The gate's code (`notInProfile`, ...), or none when allowed.
    pub reason: Option<&'a str>,
    /// The configuration.
    pub policy: &'a str,
    /// The table digest.
    pub version: &'a str,
    /// `tool_call`, or `tool_definition` for a definition held to its pin.
    pub target_type: &'static str,
    /// The tool, when telemetry may name it ([`Telemetry::tool_name`]).
    pub target: Option<&'a str>,
}

struct Running {
    cx: Context,
    inner: Arc<Inner>,
    client: bool,
    /// The MCP duration's attributes; `None`: not an MCP operation.
    metric: Option<Vec<KeyValue>>,
}

/// A request in flight, with its span; the duration is measured always
/// (the front's Prometheus reads it from [`Operation::end`]) and recorded
/// over OTLP when exporting. Dropped without `end`, it ends as a success.
pub struct Operation {
    on: Option<Running>,
    started: Instant,
}

impl Default for Operation {
    /// An operation that exports nothing, timed from now.
    fn default() -> Operation {
        Operation {
            on: None,
            started: Instant::now(),
        }
    }
}

impl Operation {
    /// Whether this operation is exported (its span is recording): the
    /// callers below build names and attributes only then.
    pub fn is_on(&self) -> bool {
        self.on.is_some()
    }

    /// Name the span anew (once its target is known); `name` is made only
    /// when exporting.
    pub fn rename(&self, name: impl FnOnce() -> String) {
        if let Some(r) = &self.on {
            r.cx.span().update_name(name());
        }
    }

    /// Add attributes to the span; made only when exporting.
    pub fn set(&self, attributes: impl FnOnce() -> Vec<KeyValue>) {
        if let Some(r) = &self.on {
            r.cx.span().set_attributes(attributes());
        }
    }

    /// The decision, as a `gen_ai.security.finding` event on the span.
    pub fn finding(&self, f: &Finding<'_>) {
        let Some(r) = &self.on else { return };
        let mut kv = vec![
            KeyValue::new("gen_ai.security.decision.type", f.decision.as_str()),
            KeyValue::new("gen_ai.security.policy.id", f.policy.to_string()),
            KeyValue::new("gen_ai.security.policy.name", f.policy.to_string()),
            KeyValue::new("gen_ai.security.policy.version", f.version.to_string()),
            KeyValue::new("gen_ai.security.target.type", f.target_type),
            KeyValue::new("gen_ai.guardian.name", "toolgate"),
        ];
        if let Some(reason) = f.reason {
            kv.push(KeyValue::new(
                "gen_ai.security.decision.reason",
                reason.to_string(),
            ));
        }
        if let Some(t) = f.target {
            kv.push(KeyValue::new("gen_ai.security.target.id", t.to_string()));
        }
        r.cx.span().add_event("gen_ai.security.finding", kv);
    }

    /// A request sent on to an upstream as part of this one: a CLIENT span,
    /// its child.
    pub fn client(
        &self,
        method: &str,
        target: Option<&str>,
        attributes: impl FnOnce() -> Vec<KeyValue>,
    ) -> Operation {
        let Some(r) = &self.on else {
            return Operation::default();
        };
        let t = Telemetry {
            inner: Some(r.inner.clone()),
            ..Telemetry::default()
        };
        t.operation(SpanKind::Client, method, target, &r.cx, attributes())
    }

    /// This span's `traceparent` and `tracestate`, to send on with a
    /// request (in its `_meta`, as MCP documents).
    pub fn carrier(&self) -> HashMap<String, String> {
        let mut out = HashMap::new();
        if let Some(r) = &self.on {
            TraceContextPropagator::new().inject_context(&r.cx, &mut out);
        }
        out
    }

    /// End the span and record the duration: `error` is `error.type` and
    /// the JSON-RPC code (`rpc.response.status_code`) of a failed request.
    /// Returns the duration, for the front's own metrics.
    pub fn end(mut self, error: Option<(&str, Option<i64>)>) -> Duration {
        self.finish(error);
        self.started.elapsed()
    }

    fn finish(&mut self, error: Option<(&str, Option<i64>)>) {
        let Some(mut r) = self.on.take() else { return };
        let span = r.cx.span();
        if let Some((kind, code)) = error {
            span.set_attribute(KeyValue::new("error.type", kind.to_string()));
            if let Some(code) = code {
                span.set_attribute(KeyValue::new("rpc.response.status_code", code.to_string()));
            }
            span.set_status(Status::error(kind.to_string()));
            if let Some(m) = &mut r.metric {
                m.push(KeyValue::new("error.type", kind.to_string()));
            }
        }
        span.end();
        let Some(metric) = &r.metric else { return };
        let took = self.started.elapsed().as_secs_f64();
        let h = if r.client {
            &r.inner.client_duration
        } else {
            &r.inner.server_duration
        };
        h.record(took, metric);
    }
}

impl Drop for Operation {
    fn drop(&mut self) {
        self.finish(None);
    }
}

/// Exporters that count what the collector did not take.
mod counting {
    use std::sync::Arc;
    use std::time::Duration;

    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::logs::{LogBatch, LogExporter};
    use opentelemetry_sdk::trace::{SpanData, SpanExporter};
    use opentelemetry_sdk::Resource;

    use super::Dropped;

    #[derive(Debug)]
    pub struct Spans<E> {
        pub inner: E,
        pub dropped: Arc<Dropped>,
    }

    impl<E: SpanExporter> SpanExporter for Spans<E> {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            let n = batch.len() as u64;
            let r = self.inner.export(batch).await;
            if r.is_err() {
                self.dropped.spans.inc_by(n);
            }
            r
        }
        fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
            self.inner.shutdown_with_timeout(timeout)
        }
        fn force_flush(&self) -> OTelSdkResult {
            self.inner.force_flush()
        }
        fn set_resource(&mut self, resource: &Resource) {
            self.inner.set_resource(resource);
        }
    }

    #[derive(Debug)]
    pub struct Logs<E> {
        pub inner: E,
        pub dropped: Arc<Dropped>,
    }

    impl<E: LogExporter> LogExporter for Logs<E> {
        async fn export(&self, batch: LogBatch<'_>) -> OTelSdkResult {
            let n = batch.iter().count() as u64;
            let r = self.inner.export(batch).await;
            if r.is_err() {
                self.dropped.logs.inc_by(n);
            }
            r
        }
        fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
            self.inner.shutdown_with_timeout(timeout)
        }
        fn set_resource(&mut self, resource: &Resource) {
            self.inner.set_resource(resource);
        }
    }
}

/// The `traceparent` and `tracestate` of a request, from its MCP `_meta`
/// (first) and its HTTP headers: one value each, or none (a header given
/// twice is no trace context).
pub fn carrier<'a>(
    meta: impl Fn(&str) -> Option<&'a str>,
    headers: Option<&axum::http::HeaderMap>,
) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for key in ["traceparent", "tracestate"] {
        let value = meta(key).map(str::to_string).or_else(|| {
            let h = headers?;
            let mut all = h.get_all(key).iter();
            let one = all.next()?;
            if all.next().is_some() {
                return None;
            }
            one.to_str().ok().map(str::to_string)
        });
        if let Some(v) = value {
            out.insert(key.to_string(), v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_costs_nothing_and_names_only_what_the_caller_sees() {
        let t = Telemetry::off();
        assert!(!t.is_on());
        let op = t.server("tools/call", Some("x"), &HashMap::new(), vec![]);
        assert!(op.carrier().is_empty());
        op.end(Some(("tool_error", Some(-32602))));
        assert_eq!(t.tool_name("mcp_a_b", true), Some("mcp_a_b"));
        assert_eq!(t.tool_name("mcp_a_b", false), None);
        let t = Telemetry {
            true_names: true,
            ..Telemetry::off()
        };
        assert_eq!(t.tool_name("mcp_a_b", false), Some("mcp_a_b"));
    }

    #[test]
    fn the_trace_context_is_one_value_each_meta_first() {
        let mut h = axum::http::HeaderMap::new();
        h.insert("traceparent", "00-aa-bb-01".parse().unwrap());
        h.append("tracestate", "a=1".parse().unwrap());
        h.append("tracestate", "b=2".parse().unwrap());
        let c = carrier(|_| None, Some(&h));
        assert_eq!(
            c.get("traceparent").map(String::as_str),
            Some("00-aa-bb-01")
        );
        assert_eq!(c.get("tracestate"), None);
        let c = carrier(|k| (k == "traceparent").then_some("00-cc-dd-01"), Some(&h));
        assert_eq!(
            c.get("traceparent").map(String::as_str),
            Some("00-cc-dd-01")
        );
    }

    #[test]
    fn protocols_are_the_standard_names() {
        assert_eq!(OtlpProtocol::parse("grpc").unwrap(), OtlpProtocol::Grpc);
        assert_eq!(
            OtlpProtocol::parse("http/protobuf").unwrap(),
            OtlpProtocol::HttpProtobuf
        );
        assert_eq!(
            OtlpProtocol::parse("http/json").unwrap_err().to_string(),
            "OTLP protocol `http/json` is not supported: use `http/protobuf` or `grpc`"
        );
    }
}
