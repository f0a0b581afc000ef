//! Zones (a class ceiling each) and providers (a zone and fallbacks each),
//! and the check for ceilings that refuse nothing.

use super::{texts, Defs, Once, Scope, Validator};
use crate::diagnostics::{NameKind, Problem, RefKind};
use crate::model::{self, Model};
use crate::syntax::ast::{self, Prop};

impl<'a> Validator<'a> {
    /// The policy's zones, else the default ones (which need the default ladder).
    pub(super) fn zones(
        &mut self,
        scope: &mut Scope<'a>,
        defs: &Defs<'_, ast::ZoneProp>,
        ladder: Option<&ast::ClassesStmt>,
    ) {
        if defs.list.is_empty() {
            for (z, c) in model::DEFAULT_ZONES {
                if let Some(&ci) = scope.class_index.get(c) {
                    scope.zones.push(model::Zone {
                        name: z.to_string(),
                        ceiling: ci,
                    });
                }
            }
            // The default zones are written against the default ladder.
            if scope.zones.len() < model::DEFAULT_ZONES.len() {
                scope.zones.clear();
                if let Some(c) = ladder {
                    self.problems.push(Problem::LadderMisuse {
                        span: c.span,
                        message: "a custom `classes` ladder needs `zone` blocks: the default zones name the default classes".into(),
                    });
                }
            }
        }
        scope.zone_index = super::index(scope.zones.iter().map(|z| z.name.as_str()));
        for (b, _) in &defs.list {
            let mut ceiling = Once::new();
            let mut first = None;
            for Prop {
                value: ast::ZoneProp::Ceiling(c),
                span,
            } in &b.props
            {
                if ceiling.set(c.text.clone(), *span, "ceiling", &mut self.problems) {
                    first = Some((c, *span));
                }
            }
            let ci = match first {
                Some((c, _)) => self.class(scope, c),
                None => {
                    self.problems.push(Problem::MissingProperty {
                        kind: NameKind::Zone,
                        name: b.name.text.clone(),
                        property: "ceiling",
                        example: "ceiling editorContent",
                        span: b.name.span,
                    });
                    None
                }
            };
            scope
                .zone_index
                .insert(b.name.text.clone(), scope.zones.len());
            scope
                .zone_spans
                .push(first.map(|(_, span)| span).unwrap_or(b.name.span));
            scope.zones.push(model::Zone {
                name: b.name.text.clone(),
                // An unresolved ceiling is an error already; the lowest class keeps the model closed.
                ceiling: ci.unwrap_or(0),
            });
        }
    }

    /// The providers, in order of definition.
    pub(super) fn providers(&mut self, scope: &mut Scope<'a>, defs: &Defs<'_, ast::ProviderProp>) {
        for (b, _) in &defs.list {
            let mut zone = None;
            let mut fallback = Vec::new();
            let mut zone_once = Once::new();
            let mut fallback_once = Once::new();
            for Prop { value, span } in &b.props {
                match value {
                    ast::ProviderProp::Zone(z) => {
                        zone_once.set(z.text.clone(), *span, "zone", &mut self.problems);
                        // A repeat is resolved too while no zone is known
                        // (the first named none).
                        if zone.is_some() {
                            continue;
                        }
                        match scope.zone_index.get(&z.text) {
                            Some(&zi) => zone = Some(zi),
                            None => {
                                let candidates = scope.zones.iter().map(|z| z.name.as_str());
                                self.unknown(RefKind::Zone, z, candidates);
                            }
                        }
                    }
                    ast::ProviderProp::Fallback(list) => {
                        fallback_once.set(texts(list), *span, "fallback", &mut self.problems);
                        // A repeat is resolved too while no fallback is known.
                        if !fallback.is_empty() {
                            continue;
                        }
                        for n in self.dedup(list) {
                            if n.text == b.name.text {
                                self.problems.push(Problem::FallbackToSelf {
                                    provider: n.text.clone(),
                                    span: n.span,
                                });
                            }
                            match defs.index.get(n.text.as_str()) {
                                Some(&pi) => fallback.push(pi),
                                None => self.unknown(RefKind::Provider, n, defs.names()),
                            }
                        }
                    }
                }
            }
            scope.providers.push(model::Provider {
                name: b.name.text.clone(),
                zone,
                fallback,
            });
        }
    }

    /// TG3003 for a zone whose ceiling is below the top class yet at or above
    /// every tool's class: it refuses nothing (the top class refuses nothing
    /// by design). `zone_spans` holds the span of each `zone` block's ceiling.
    pub(super) fn unreached_ceilings(&mut self, model: &Model, zone_spans: &[crate::source::Span]) {
        let max_class = (0..model.tools.len()).map(|t| model.tool_class(t)).max();
        for (i, z) in model.zones.iter().enumerate() {
            let Some(&span) = zone_spans.get(i) else {
                continue;
            };
            if z.ceiling < model.top_class() && max_class.is_some_and(|m| m <= z.ceiling) {
                self.problems.push(Problem::CeilingUnreached {
                    zone: z.name.clone(),
                    span,
                    ceiling: model.classes[z.ceiling].clone(),
                });
            }
        }
    }
}
