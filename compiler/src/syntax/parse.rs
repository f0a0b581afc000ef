//! Policy text -> [`ast::PolicyFile`]. pest does the recognition; this module
//! builds the tree and turns pest's errors into friendly diagnostics.

use pest::iterators::Pair;
use pest::Parser;
use pest_derive::Parser;

use crate::diagnostics::Problem;
use crate::source::{FileId, Span};
use crate::syntax::ast::*;

/// Policy files larger than this are refused with TG0002 before parsing.
pub const MAX_POLICY_BYTES: usize = 8 * 1024 * 1024;

#[derive(Parser)]
#[grammar = "../../grammar/toolgate.pest"]
struct PolicyParser;

/// Parse one policy file. On a syntax error the result is the one diagnostic
/// pest reports (the furthest position it reached).
pub fn parse_policy(file: FileId, text: &str) -> Result<PolicyFile, Problem> {
    Problem::check_size(file, text, "policy file", MAX_POLICY_BYTES)?;
    let mut pairs =
        PolicyParser::parse(Rule::policy, text).map_err(|e| syntax_problem(file, text, e))?;
    let b = Builder { file };
    let mut out = PolicyFile::default();
    if let Some(policy) = pairs.next() {
        for pair in policy.into_inner() {
            if pair.as_rule() == Rule::EOI {
                continue;
            }
            out.statements.push(b.statement(pair));
        }
    }
    Ok(out)
}

fn syntax_problem(file: FileId, text: &str, err: pest::error::Error<Rule>) -> Problem {
    use pest::error::{ErrorVariant, InputLocation};
    let start = match err.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((s, _)) => s,
    };
    let mut expected: Vec<String> = match &err.variant {
        ErrorVariant::ParsingError { positives, .. } => positives
            .iter()
            .filter_map(|r| describe(*r))
            .flat_map(|d| d.split('|'))
            .map(str::to_string)
            .collect(),
        ErrorVariant::CustomError { message } => vec![message.clone()],
    };
    expected.sort();
    expected.dedup();
    // The offending token: the run of non-space characters at the error position.
    let rest = &text[start.min(text.len())..];
    let token_len = rest
        .char_indices()
        .find(|(_, c)| c.is_whitespace() || matches!(c, '{' | '}' | '[' | ']' | ','))
        .map(|(i, _)| i)
        .unwrap_or(rest.len());
    let token_len = if token_len == 0 {
        rest.chars().next().map(char::len_utf8).unwrap_or(0)
    } else {
        token_len
    };
    // Quoted cut to MAX_QUOTED characters: a file that is not a policy at all
    // (one long run without white space) is never echoed whole.
    let found = if rest.is_empty() {
        None
    } else {
        Some(quote_token(&rest[..token_len]))
    };
    let token = &rest[..token_len];
    let hint = keyword_hint(token, &expected).or_else(|| dotted_name_hint(text, start, token));
    let unclosed = expected
        .iter()
        .any(|e| e == "`}`")
        .then(|| unclosed_brace(text, start, token))
        .flatten()
        .map(|at| Span::new(file, at..at + 1));
    Problem::Syntax {
        span: Span::new(file, start..start + token_len),
        expected,
        found,
        hint,
        unclosed,
    }
}

/// `excludes` where `exclude` was expected: the keyword it nearly is.
fn keyword_hint(token: &str, expected: &[String]) -> Option<String> {
    let keywords: Vec<&str> = expected
        .iter()
        .filter_map(|e| e.strip_prefix('`')?.strip_suffix('`'))
        .filter(|k| k.chars().all(|c| c.is_ascii_alphabetic() || c == '-'))
        .collect();
    let s = toolgate_runtime::names::did_you_mean(token, keywords.iter().copied())?;
    Some(format!("did you mean `{s}`?"))
}

/// `refund.issue` unquoted: a bare name stops at the `.`, so the parser
/// meets `.issue`. Such names are written in quotes.
fn dotted_name_hint(text: &str, start: usize, token: &str) -> Option<String> {
    if !token.starts_with('.') {
        return None;
    }
    let head_start = text[..start]
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let head = &text[head_start..start];
    if head.is_empty() {
        return None;
    }
    let name = format!("{head}{token}");
    Some(format!(
        "a name that holds `.` is written in quotes: \"{}\"",
        quote_token(&name)
    ))
}

/// Where a missing `}` was due: the parser stopped at a new statement's
/// keyword at the start of a line, or at the end of the file, while a `{`
/// was open. The innermost open `{` before `start` (strings and comments
/// skipped).
fn unclosed_brace(text: &str, start: usize, token: &str) -> Option<usize> {
    // A statement starts in the first column; an indented word is a
    // property (a misspelt one is not a missing brace).
    let at_line_start = start == 0 || text[..start].ends_with('\n');
    let new_statement = at_line_start
        && token
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic());
    if !(token.is_empty() || new_statement) {
        return None;
    }
    let mut open = Vec::new();
    let mut in_string = false;
    let mut in_comment = false;
    for (i, c) in text[..start].char_indices() {
        match c {
            '\n' => {
                in_string = false;
                in_comment = false;
            }
            _ if in_comment => {}
            '"' => in_string = !in_string,
            '#' if !in_string => in_comment = true,
            '{' if !in_string => open.push(i),
            '}' if !in_string => {
                open.pop();
            }
            _ => {}
        }
    }
    open.last().copied()
}

/// The most characters of an offending token a diagnostic quotes.
pub const MAX_QUOTED: usize = 40;

/// `token` cut to [`MAX_QUOTED`] characters (an ellipsis marks the cut).
pub fn quote_token(token: &str) -> String {
    match token.char_indices().nth(MAX_QUOTED) {
        None => token.to_string(),
        Some((i, _)) => format!("{}…", &token[..i]),
    }
}

/// What a rule means to a reader; `None` hides helper rules from messages.
fn describe(rule: Rule) -> Option<&'static str> {
    Some(match rule {
        Rule::EOI => "end of file",
        Rule::policy | Rule::statement => "a statement",
        Rule::classes_stmt | Rule::kw_classes => "`classes`",
        Rule::enforcement_stmt | Rule::kw_enforcement => "`enforcement`",
        Rule::enforcement_mode => "`observe`|`enforce`",
        Rule::kw_observe => "`observe`",
        Rule::kw_enforce => "`enforce`",
        Rule::remote_visibility_stmt | Rule::kw_remote_tools => "`remote-tools`",
        Rule::kw_visible_to => "`visible-to`",
        Rule::audience => "`admins`|`everyone`|`nobody`",
        Rule::kw_admins => "`admins`",
        Rule::kw_everyone => "`everyone`",
        Rule::kw_nobody => "`nobody`",
        Rule::unprofiled_stmt | Rule::kw_unprofiled => "`consumers-without-profile`",
        Rule::unprofiled_mode => "`unrestricted`|`refused`",
        Rule::kw_unrestricted => "`unrestricted`",
        Rule::kw_refused => "`refused`",
        Rule::unknown_consumers_stmt | Rule::kw_unknown_consumers => "`unknown-consumers`",
        Rule::unknown_consumers_mode => "`refused`|`admitted`",
        Rule::kw_admitted => "`admitted`",
        Rule::skill_loader_stmt | Rule::kw_skill_loader => "`skill-loader`",
        Rule::group_block | Rule::kw_group | Rule::group_selector => "`group`",
        Rule::kw_server | Rule::server_selector => "`server`",
        Rule::tool_block | Rule::kw_tool => "`tool`",
        Rule::zone_block | Rule::kw_zone | Rule::zone_prop => "`zone`",
        Rule::provider_block | Rule::kw_provider | Rule::provider_prop_ref => "`provider`",
        Rule::skill_block | Rule::kw_skill => "`skill`",
        Rule::configuration_block | Rule::kw_configuration => "`configuration`",
        Rule::profile_block | Rule::kw_profile | Rule::profile_prop => "`profile`",
        Rule::consumer_block | Rule::kw_consumer => "`consumer`",
        Rule::gateway_block | Rule::kw_gateway => "`gateway`",
        Rule::state_prop => "`enabled`|`disabled`",
        Rule::kw_enabled => "`enabled`",
        Rule::kw_disabled => "`disabled`",
        Rule::admin_prop | Rule::kw_admin_only => "`admin-only`",
        Rule::negation | Rule::kw_not => "`not admin-only`",
        Rule::class_prop | Rule::kw_class => "`class`",
        Rule::ceiling_prop | Rule::kw_ceiling => "`ceiling`",
        Rule::fallback_prop | Rule::kw_fallback => "`fallback`",
        Rule::tools_prop | Rule::kw_tools => "`tools`",
        Rule::groups_prop | Rule::kw_groups => "`groups`",
        Rule::exclude_prop | Rule::kw_exclude => "`exclude`",
        Rule::skills_prop | Rule::kw_skills => "`skills`",
        Rule::allow_prop | Rule::kw_allow => "`allow`",
        Rule::approval_prop | Rule::kw_needs_approval => "`needs-approval`",
        Rule::rule_block | Rule::kw_rule => "`rule`",
        Rule::http_status_match | Rule::kw_http_status => "`http-status`",
        Rule::error_code_match | Rule::kw_error_code => "`error-code`",
        Rule::message_match | Rule::kw_message => "`message`",
        Rule::data_match | Rule::kw_data => "`data`",
        Rule::result_text_match | Rule::kw_result_text => "`result-text`",
        Rule::header_match | Rule::kw_header => "`header`",
        Rule::body_match | Rule::kw_body => "`body`",
        Rule::remediation_prop | Rule::kw_remediation => "`remediation`",
        Rule::outcome_prop => "`=>`",
        Rule::outcome => {
            "`not-in-profile`|`not-registered`|`content-policy`|`policy`|`tool-failure`"
        }
        Rule::lbrace => "`{`",
        Rule::rbrace => "`}`",
        Rule::lbracket => "`[`",
        Rule::rbracket => "`]`",
        Rule::comma => "`,`",
        Rule::equals => "`=`",
        Rule::arrow => "`=>`",
        Rule::kw_not_in_profile => "`not-in-profile`",
        Rule::kw_not_registered => "`not-registered`",
        Rule::kw_content_policy => "`content-policy`",
        Rule::kw_policy => "`policy`",
        Rule::kw_tool_failure => "`tool-failure`",
        Rule::name_list => "a list `[...]`",
        Rule::name | Rule::bare | Rule::quoted => "a name",
        Rule::prefix_selector | Rule::bare_prefix | Rule::quoted_prefix => {
            "a prefix pattern `name_*`"
        }
        Rule::string => "a quoted string",
        Rule::integer => "a number",
        _ => return None,
    })
}

struct Builder {
    file: FileId,
}

impl Builder {
    fn span(&self, pair: &Pair<Rule>) -> Span {
        let s = pair.as_span();
        Span::new(self.file, s.start()..s.end())
    }

    fn name(&self, pair: Pair<Rule>) -> Name {
        let span = self.span(&pair);
        let inner = pair.into_inner().next();
        let text = match inner {
            Some(p) if p.as_rule() == Rule::quoted => p
                .into_inner()
                .next()
                .map(|q| q.as_str().to_string())
                .unwrap_or_default(),
            Some(p) => p.as_str().to_string(),
            None => String::new(),
        };
        Name { text, span }
    }

    fn names(&self, list: Pair<Rule>) -> Vec<Name> {
        self.parts(list).map(|p| self.name(p)).collect()
    }

    fn string(&self, pair: Pair<Rule>) -> String {
        pair.into_inner()
            .next()
            .map(|p| p.as_str().to_string())
            .unwrap_or_default()
    }

    /// Children that are not keywords: the meaningful parts of a statement.
    fn parts<'a>(&self, pair: Pair<'a, Rule>) -> impl Iterator<Item = Pair<'a, Rule>> {
        pair.into_inner().filter(|p| !is_keyword(p.as_rule()))
    }

    /// A one-word setting (`enforcement`, `remote-tools visible-to`,
    /// `unprofiled`): its value by keyword, the default for any other.
    fn setting(&self, pair: Pair<Rule>, span: Span, rule: Rule) -> Statement {
        let value = self.parts(pair).next();
        let (value_span, kw) = match &value {
            Some(v) => (
                self.span(v),
                v.clone().into_inner().next().map(|k| k.as_rule()),
            ),
            None => (span, None),
        };
        match rule {
            Rule::enforcement_stmt => Statement::Enforcement(Setting {
                value: if kw == Some(Rule::kw_observe) {
                    Enforcement::Observe
                } else {
                    Enforcement::Enforce
                },
                value_span,
                span,
            }),
            Rule::remote_visibility_stmt => Statement::RemoteVisibility(Setting {
                value: match kw {
                    Some(Rule::kw_everyone) => Audience::Everyone,
                    Some(Rule::kw_nobody) => Audience::Nobody,
                    _ => Audience::Admins,
                },
                value_span,
                span,
            }),
            Rule::unknown_consumers_stmt => Statement::UnknownConsumers(Setting {
                value: if kw == Some(Rule::kw_admitted) {
                    UnknownConsumers::Admitted
                } else {
                    UnknownConsumers::Refused
                },
                value_span,
                span,
            }),
            _ => Statement::Unprofiled(Setting {
                value: if kw == Some(Rule::kw_refused) {
                    Unprofiled::Refused
                } else {
                    Unprofiled::Unrestricted
                },
                value_span,
                span,
            }),
        }
    }

    fn skill_loader(&self, pair: Pair<Rule>, span: Span) -> Statement {
        let name = self.parts(pair).next().map(|n| self.name(n));
        let name = name.unwrap_or(Name {
            text: String::new(),
            span,
        });
        Statement::SkillLoader(Setting {
            value_span: name.span,
            value: name,
            span,
        })
    }

    fn statement(&self, pair: Pair<Rule>) -> Statement {
        let span = self.span(&pair);
        let rule = pair.as_rule();
        match rule {
            Rule::classes_stmt => {
                let list = self.parts(pair).next();
                Statement::Classes(ClassesStmt {
                    ladder: list.map(|l| self.names(l)).unwrap_or_default(),
                    span,
                })
            }
            Rule::enforcement_stmt
            | Rule::remote_visibility_stmt
            | Rule::unprofiled_stmt
            | Rule::unknown_consumers_stmt => self.setting(pair, span, rule),
            Rule::skill_loader_stmt => self.skill_loader(pair, span),
            Rule::group_block => {
                Statement::Group(self.block(pair, span, |b, p| match p.as_rule() {
                    Rule::state_prop => Some(GroupProp::State(b.state(p))),
                    Rule::class_prop => Some(GroupProp::Class(b.first_name(p))),
                    _ => None,
                }))
            }
            Rule::tool_block => Statement::Tool(self.block(pair, span, |b, p| match p.as_rule() {
                Rule::state_prop => Some(ToolProp::State(b.state(p))),
                Rule::admin_prop => Some(ToolProp::AdminOnly(
                    !p.into_inner().any(|c| c.as_rule() == Rule::negation),
                )),
                Rule::class_prop => Some(ToolProp::Class(b.first_name(p))),
                _ => None,
            })),
            Rule::zone_block => Statement::Zone(self.block(pair, span, |b, p| match p.as_rule() {
                Rule::ceiling_prop => Some(ZoneProp::Ceiling(b.first_name(p))),
                _ => None,
            })),
            Rule::provider_block => {
                Statement::Provider(self.block(pair, span, |b, p| match p.as_rule() {
                    Rule::zone_prop => Some(ProviderProp::Zone(b.first_name(p))),
                    Rule::fallback_prop => Some(ProviderProp::Fallback(b.first_list(p))),
                    _ => None,
                }))
            }
            Rule::skill_block => {
                Statement::Skill(self.block(pair, span, |b, p| match p.as_rule() {
                    Rule::tools_prop => Some(SkillProp::Tools(b.first_list(p))),
                    _ => None,
                }))
            }
            Rule::configuration_block => {
                Statement::Configuration(self.block(pair, span, |b, p| match p.as_rule() {
                    Rule::provider_prop_ref => Some(ConfigurationProp::Provider(b.first_name(p))),
                    Rule::groups_prop => Some(ConfigurationProp::Groups(b.first_list(p))),
                    Rule::exclude_prop => Some(ConfigurationProp::Exclude(b.first_list(p))),
                    Rule::skills_prop => Some(ConfigurationProp::Skills(b.first_list(p))),
                    Rule::approval_prop => Some(ConfigurationProp::NeedsApproval(
                        b.parts(p).map(|s| b.selector(s)).collect(),
                    )),
                    _ => None,
                }))
            }
            Rule::profile_block => {
                Statement::Profile(self.block(pair, span, |b, p| match p.as_rule() {
                    Rule::allow_prop => Some(ProfileProp::Allow(
                        b.parts(p).map(|s| b.selector(s)).collect(),
                    )),
                    Rule::approval_prop => Some(ProfileProp::NeedsApproval(
                        b.parts(p).map(|s| b.selector(s)).collect(),
                    )),
                    _ => None,
                }))
            }
            Rule::consumer_block => {
                Statement::Consumer(self.block(pair, span, |b, p| match p.as_rule() {
                    Rule::profile_prop => Some(ConsumerProp::Profile(b.first_name(p))),
                    _ => None,
                }))
            }
            Rule::gateway_block => {
                Statement::Gateway(self.block(pair, span, |b, p| match p.as_rule() {
                    Rule::rule_block => Some(b.rule(p)),
                    _ => None,
                }))
            }
            // The grammar admits no other statement.
            _ => Statement::Classes(ClassesStmt {
                ladder: Vec::new(),
                span,
            }),
        }
    }

    fn block<P>(
        &self,
        pair: Pair<Rule>,
        span: Span,
        prop: impl Fn(&Self, Pair<Rule>) -> Option<P>,
    ) -> Block<P> {
        let mut parts = self.parts(pair);
        let name = match parts.next() {
            Some(n) => self.name(n),
            None => Name {
                text: String::new(),
                span,
            },
        };
        let props = parts
            .filter_map(|p| {
                let pspan = self.span(&p);
                prop(self, p).map(|value| Prop { value, span: pspan })
            })
            .collect();
        Block { name, props, span }
    }

    fn state(&self, pair: Pair<Rule>) -> bool {
        pair.into_inner().next().map(|k| k.as_rule()) == Some(Rule::kw_enabled)
    }

    fn first_name(&self, pair: Pair<Rule>) -> Name {
        let span = self.span(&pair);
        self.parts(pair)
            .next()
            .map(|n| self.name(n))
            .unwrap_or(Name {
                text: String::new(),
                span,
            })
    }

    fn first_list(&self, pair: Pair<Rule>) -> Vec<Name> {
        self.parts(pair)
            .next()
            .map(|l| self.names(l))
            .unwrap_or_default()
    }

    fn selector(&self, pair: Pair<Rule>) -> Selector {
        match pair.as_rule() {
            Rule::group_selector => Selector::Group(self.first_name(pair)),
            Rule::server_selector => Selector::Server(self.first_name(pair)),
            Rule::prefix_selector => {
                let span = self.span(&pair);
                let raw = pair.as_str();
                let text = raw.trim_matches('"').trim_end_matches('*').to_string();
                Selector::Prefix(Name { text, span })
            }
            _ => Selector::Tool(self.name(pair)),
        }
    }

    fn rule(&self, pair: Pair<Rule>) -> Rule_ {
        let mut name = None;
        let mut matchers = Vec::new();
        let mut outcome = (Outcome::Policy, self.span(&pair));
        for p in self.parts(pair) {
            let span = self.span(&p);
            match p.as_rule() {
                Rule::name => name = Some(self.name(p)),
                Rule::http_status_match | Rule::error_code_match => {
                    let is_status = p.as_rule() == Rule::http_status_match;
                    let n = self
                        .parts(p)
                        .next()
                        .and_then(|i| i.as_str().parse::<i64>().ok())
                        .unwrap_or(0);
                    matchers.push((
                        if is_status {
                            Matcher::HttpStatus(n)
                        } else {
                            Matcher::ErrorCode(n)
                        },
                        span,
                    ));
                }
                Rule::message_match
                | Rule::result_text_match
                | Rule::body_match
                | Rule::remediation_prop => {
                    let which = p.as_rule();
                    let s = self
                        .parts(p)
                        .next()
                        .map(|s| self.string(s))
                        .unwrap_or_default();
                    let m = match which {
                        Rule::message_match => Matcher::Message(s),
                        Rule::result_text_match => Matcher::ResultText(s),
                        Rule::body_match => Matcher::Body(s),
                        _ => Matcher::Remediation(s),
                    };
                    matchers.push((m, span));
                }
                Rule::data_match | Rule::header_match => {
                    let is_data = p.as_rule() == Rule::data_match;
                    let mut it = self.parts(p);
                    let field = it.next().map(|n| self.name(n));
                    let value = it.next().map(|s| self.string(s)).unwrap_or_default();
                    if let Some(field) = field {
                        matchers.push((
                            if is_data {
                                Matcher::Data(field, value)
                            } else {
                                Matcher::Header(field, value)
                            },
                            span,
                        ));
                    }
                }
                Rule::outcome_prop => {
                    let kw = self
                        .parts(p)
                        .next()
                        .and_then(|o| o.into_inner().next())
                        .map(|k| k.as_rule());
                    let o = match kw {
                        Some(Rule::kw_not_in_profile) => Outcome::NotInProfile,
                        Some(Rule::kw_not_registered) => Outcome::NotRegistered,
                        Some(Rule::kw_content_policy) => Outcome::ContentPolicy,
                        Some(Rule::kw_tool_failure) => Outcome::ToolFailure,
                        _ => Outcome::Policy,
                    };
                    outcome = (o, span);
                }
                _ => {}
            }
        }
        let fallback = outcome.1;
        Rule_ {
            name: name.unwrap_or(Name {
                text: String::new(),
                span: fallback,
            }),
            matchers,
            outcome: outcome.0,
            outcome_span: outcome.1,
        }
    }
}

type Rule_ = crate::syntax::ast::GatewayRule;

fn is_keyword(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::lbrace
            | Rule::rbrace
            | Rule::lbracket
            | Rule::rbracket
            | Rule::comma
            | Rule::equals
            | Rule::arrow
            | Rule::kw_classes
            | Rule::kw_enforcement
            | Rule::kw_observe
            | Rule::kw_enforce
            | Rule::kw_remote_tools
            | Rule::kw_visible_to
            | Rule::kw_admins
            | Rule::kw_everyone
            | Rule::kw_nobody
            | Rule::kw_unprofiled
            | Rule::kw_unrestricted
            | Rule::kw_refused
            | Rule::kw_unknown_consumers
            | Rule::kw_admitted
            | Rule::kw_skill_loader
            | Rule::kw_group
            | Rule::kw_server
            | Rule::kw_groups
            | Rule::kw_tool
            | Rule::kw_tools
            | Rule::kw_enabled
            | Rule::kw_disabled
            | Rule::kw_not
            | Rule::kw_admin_only
            | Rule::kw_class
            | Rule::kw_zone
            | Rule::kw_ceiling
            | Rule::kw_provider
            | Rule::kw_fallback
            | Rule::kw_skill
            | Rule::kw_skills
            | Rule::kw_configuration
            | Rule::kw_exclude
            | Rule::kw_profile
            | Rule::kw_allow
            | Rule::kw_needs_approval
            | Rule::kw_consumer
            | Rule::kw_gateway
            | Rule::kw_rule
            | Rule::kw_http_status
            | Rule::kw_error_code
            | Rule::kw_message
            | Rule::kw_data
            | Rule::kw_result_text
            | Rule::kw_header
            | Rule::kw_body
            | Rule::kw_remediation
            | Rule::kw_not_in_profile
            | Rule::kw_not_registered
            | Rule::kw_content_policy
            | Rule::kw_policy
            | Rule::kw_tool_failure
    )
}
