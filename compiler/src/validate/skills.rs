//! Skills: the tools each skill declares.

use super::{texts, Defs, Once, Scope, Validator};
use crate::model;
use crate::syntax::ast::{self, Prop};

impl<'a> Validator<'a> {
    /// The skills, in order of definition; a declared tool the registry does
    /// not hold is reported but kept (the skill names it).
    pub(super) fn skills(&mut self, scope: &mut Scope<'a>, defs: &Defs<'_, ast::SkillProp>) {
        for (b, _) in &defs.list {
            let mut once = Once::new();
            let mut declared: Option<Vec<String>> = None;
            for Prop {
                value: ast::SkillProp::Tools(list),
                span,
            } in &b.props
            {
                if !once.set(texts(list), *span, "tools", &mut self.problems) {
                    continue;
                }
                let mut names = Vec::new();
                for n in self.dedup(list) {
                    if !scope.tool_index.contains_key(n.text.as_str())
                        && !self.pattern_in_list(n, "a skill's `tools`")
                    {
                        self.unknown_tool(scope, n);
                    }
                    names.push(n.text.clone());
                }
                declared = Some(names);
            }
            scope.skills.push(model::Skill {
                name: b.name.text.clone(),
                tools: declared,
            });
        }
    }
}
