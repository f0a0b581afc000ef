//! Gateways: rules that classify a gateway's answer to a tool call.

use std::collections::HashMap;

use super::{Defs, Once, Validator};
use crate::diagnostics::{NameKind, Problem};
use crate::model;
use crate::source::Span;
use crate::syntax::ast::{self, Prop};
use toolgate_runtime::classify;
use toolgate_runtime::pattern::{self, Capture};
use toolgate_runtime::spec::RuleOutcome;

impl<'a> Validator<'a> {
    /// The gateways, in order of definition; a rule name given twice in one
    /// gateway is TG1002 and the repeat is dropped.
    pub(super) fn gateways(&mut self, defs: &Defs<'_, ast::GatewayRule>) -> Vec<model::Gateway> {
        let mut gateways = Vec::new();
        for (b, _) in &defs.list {
            let mut rules = Vec::new();
            let mut seen: HashMap<&str, Span> = HashMap::new();
            for Prop { value: r, .. } in &b.props {
                if let Some(first) = seen.get(r.name.text.as_str()) {
                    self.problems.push(Problem::Duplicate {
                        kind: NameKind::Rule,
                        name: r.name.text.clone(),
                        span: r.name.span,
                        first: *first,
                    });
                    continue;
                }
                seen.insert(&r.name.text, r.name.span);
                let rule = self.rule(r);
                self.never_matches(&b.name.text, r, &rule, &rules);
                rules.push((rule, r.name.span));
            }
            let rules = rules.into_iter().map(|(r, _)| r).collect();
            gateways.push(model::Gateway {
                name: b.name.text.clone(),
                rules,
            });
        }
        gateways
    }

    /// One rule: its matchers (each but `data` given at most once) and outcome.
    fn rule(&mut self, r: &ast::GatewayRule) -> model::GatewayRule {
        let mut rule = model::GatewayRule {
            name: r.name.text.clone(),
            http_status: None,
            error_code: None,
            message: None,
            data: Vec::new(),
            result_text: None,
            headers: Vec::new(),
            body: None,
            remediation: None,
            outcome: match r.outcome {
                ast::Outcome::NotInProfile => RuleOutcome::NotInProfile,
                ast::Outcome::NotRegistered => RuleOutcome::NotRegistered,
                ast::Outcome::ContentPolicy => RuleOutcome::ContentPolicy,
                ast::Outcome::Policy => RuleOutcome::Policy,
                ast::Outcome::ToolFailure => RuleOutcome::ToolFailure,
            },
        };
        let mut once: HashMap<&'static str, Once<&ast::Matcher>> = HashMap::new();
        for (m, span) in &r.matchers {
            let property = match m {
                ast::Matcher::HttpStatus(_) => "http-status",
                ast::Matcher::ErrorCode(_) => "error-code",
                ast::Matcher::Message(_) => "message",
                ast::Matcher::Data(_, _) => "data",
                ast::Matcher::ResultText(_) => "result-text",
                ast::Matcher::Header(_, _) => "header",
                ast::Matcher::Body(_) => "body",
                ast::Matcher::Remediation(_) => "remediation",
            };
            self.captures(m, *span);
            if property != "data"
                && property != "header"
                && !once
                    .entry(property)
                    .or_default()
                    .set(m, *span, property, &mut self.problems)
            {
                continue;
            }
            match m {
                ast::Matcher::HttpStatus(n) => rule.http_status = Some(*n),
                ast::Matcher::ErrorCode(n) => rule.error_code = Some(*n),
                ast::Matcher::Message(s) => rule.message = Some(s.clone()),
                ast::Matcher::Data(f, s) => rule.data.push((f.text.clone(), s.clone())),
                ast::Matcher::ResultText(s) => rule.result_text = Some(s.clone()),
                ast::Matcher::Header(f, s) => rule.headers.push((f.text.clone(), s.clone())),
                ast::Matcher::Body(s) => rule.body = Some(s.clone()),
                ast::Matcher::Remediation(s) => rule.remediation = Some(s.clone()),
            }
        }
        rule
    }

    /// TG2008 for each `{name}` in a glob or remediation that captures nothing
    /// (it would silently match itself as text).
    fn captures(&mut self, m: &ast::Matcher, span: Span) {
        let text = match m {
            ast::Matcher::Message(s)
            | ast::Matcher::ResultText(s)
            | ast::Matcher::Body(s)
            | ast::Matcher::Remediation(s)
            | ast::Matcher::Data(_, s)
            | ast::Matcher::Header(_, s) => s,
            ast::Matcher::HttpStatus(_) | ast::Matcher::ErrorCode(_) => return,
        };
        let source = self.sources.text(span);
        // The string is the last quoted part of the matcher: offsets count from its opening quote.
        let base = source.rfind(text.as_str()).unwrap_or(0);
        for (at, name) in pattern::placeholders(text) {
            if Capture::ALL.iter().any(|c| c.name() == name) {
                continue;
            }
            let start = span.start as usize + base + at;
            self.problems.push(Problem::UnknownCapture {
                name: name.to_string(),
                span: Span::new(span.file, start..start + name.len() + 2),
            });
        }
    }

    /// TG3008: a rule no answer can satisfy, or that an earlier rule of the
    /// same gateway always answers first.
    fn never_matches(
        &mut self,
        gateway: &str,
        r: &ast::GatewayRule,
        rule: &model::GatewayRule,
        earlier: &[(model::GatewayRule, Span)],
    ) {
        let problem =
            |why: &str, help: &str, shadowed_by: Option<Span>| Problem::RuleNeverMatches {
                rule: r.name.text.clone(),
                gateway: gateway.to_string(),
                span: r.name.span,
                why: why.to_string(),
                help: help.to_string(),
                shadowed_by,
            };
        let found = if !classify::looks_at_something(rule) {
            Some(problem(
                "it has no matcher",
                "add the matchers that recognise the answer (`http-status`, `header`, `body`, `error-code`, `message`, `data`, `result-text`)",
                None,
            ))
        } else if classify::needs_error(rule) && rule.result_text.is_some() {
            Some(problem(
                "it needs both a JSON-RPC error and an `isError` result",
                "an answer is either an error or a result: split it into two rules, one with `result-text`, one with the error matchers",
                None,
            ))
        } else if rule.http_status.is_some_and(|s| !(100..=599).contains(&s)) {
            Some(problem(
                "no HTTP status is outside 100 to 599",
                "write the status the gateway answers with (`http-status 403`)",
                None,
            ))
        } else if let Some((name, _)) = rule.headers.iter().find(|(n, _)| !is_field_name(n)) {
            Some(problem(
                &format!("`{name}` is not an HTTP header name"),
                "a header name is letters, digits and ``!#$%&'*+-.^_`|~``; check the spelling",
                None,
            ))
        } else {
            earlier
                .iter()
                .find(|(e, _)| covers(e, rule))
                .map(|(e, at)| {
                    problem(
                        &format!("rule `{}` above matches every answer this one does", e.name),
                        "move this rule above the broader one, or delete it",
                        Some(*at),
                    )
                })
        };
        self.problems.extend(found);
    }
}

/// An HTTP field name (RFC 9110 `token`).
fn is_field_name(n: &str) -> bool {
    !n.is_empty()
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Whether every answer `later` matches is matched by `first`: each matcher
/// of `first` appears in `later` as written (a rule with fewer conditions is
/// broader). Header names compare without regard to case.
fn covers(first: &model::GatewayRule, later: &model::GatewayRule) -> bool {
    let same = |a: &Option<String>, b: &Option<String>| a.is_none() || a == b;
    let same_n = |a: &Option<i64>, b: &Option<i64>| a.is_none() || a == b;
    classify::looks_at_something(first)
        && same_n(&first.http_status, &later.http_status)
        && same_n(&first.error_code, &later.error_code)
        && same(&first.message, &later.message)
        && same(&first.result_text, &later.result_text)
        && same(&first.body, &later.body)
        && first.data.iter().all(|d| later.data.contains(d))
        && first.headers.iter().all(|(n, g)| {
            later
                .headers
                .iter()
                .any(|(m, h)| m.eq_ignore_ascii_case(n) && g == h)
        })
}
