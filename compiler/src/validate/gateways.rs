//! Gateways: rules that classify a gateway's answer to a tool call.

use std::collections::HashMap;

use super::{Defs, Once, Validator};
use crate::ast::{self, Prop};
use crate::diagnostics::{NameKind, Problem};
use crate::model;
use crate::source::Span;
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
                rules.push(self.rule(r));
            }
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
            };
            if property != "data"
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
            }
        }
        rule
    }
}
