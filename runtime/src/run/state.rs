//! Run state: the skill allow-list and the exclusions a run started with,
//! stored with the run and narrowed (never widened) on resume.
//!
//! Stored form (JSON), docs/gate-semantics.md §13:
//! `{"allowedToolNames": null | ["a", ...], "excludedToolNames": ["x", ...]}`
//! where `excludedToolNames` is written only when non-empty. A stored value
//! that is not a list of names cannot say what it allowed or excluded, and
//! admits no tool, the skill loader included.

use serde_json::{Map, Value};

/// The run's skill allow-list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowList {
    /// No skill declared one: no restriction.
    Unrestricted,
    /// Only these names (an empty list allows no tool but the skill loader).
    Only(Vec<String>),
    /// The stored value was not a list: no tool at all.
    Unreadable,
}

/// The exclusions the run carries from its start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exclusions {
    Names(Vec<String>),
    /// The stored value was not a list: no tool at all.
    Unreadable,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunState {
    pub allowed: AllowList,
    pub excluded: Exclusions,
}

impl Default for RunState {
    fn default() -> RunState {
        RunState {
            allowed: AllowList::Unrestricted,
            excluded: Exclusions::Names(Vec::new()),
        }
    }
}

/// The keys of the stored form; any other key makes a stored run unreadable.
pub const STORED_KEYS: [&str; 2] = ["allowedToolNames", "excludedToolNames"];

/// Why a stored run cannot be read, and the state to use instead, which
/// admits no tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunStateError {
    pub message: String,
    pub state: RunState,
}

impl std::fmt::Display for RunStateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unreadable stored run: {}", self.message)
    }
}

impl std::error::Error for RunStateError {}

/// `none` with X is X; otherwise the names in both, in the first list's order.
pub fn intersect(a: &AllowList, b: &AllowList) -> AllowList {
    match (a, b) {
        (AllowList::Unreadable, _) | (_, AllowList::Unreadable) => AllowList::Unreadable,
        (AllowList::Unrestricted, x) | (x, AllowList::Unrestricted) => x.clone(),
        (AllowList::Only(x), AllowList::Only(y)) => {
            AllowList::Only(x.iter().filter(|n| y.contains(n)).cloned().collect())
        }
    }
}

fn union_names(a: &Exclusions, b: &Exclusions) -> Exclusions {
    match (a, b) {
        (Exclusions::Names(x), Exclusions::Names(y)) => {
            let mut out = x.clone();
            for n in y {
                if !out.contains(n) {
                    out.push(n.clone());
                }
            }
            Exclusions::Names(out)
        }
        _ => Exclusions::Unreadable,
    }
}

impl RunState {
    /// On resume: `self` is the stored state, `live` the one resolved now.
    /// Allow-lists intersect; exclusions union. Never wider than either.
    pub fn resume(&self, live: &RunState) -> RunState {
        RunState {
            allowed: intersect(&self.allowed, &live.allowed),
            excluded: union_names(&self.excluded, &live.excluded),
        }
    }

    /// The state that admits nothing: what a stored run that cannot be read gets.
    pub fn unreadable() -> RunState {
        RunState {
            allowed: AllowList::Unreadable,
            excluded: Exclusions::Unreadable,
        }
    }

    /// Whether this state can say what it allows (neither part unreadable).
    pub fn is_readable(&self) -> bool {
        self.allowed != AllowList::Unreadable && self.excluded != Exclusions::Unreadable
    }

    /// Read the stored form strictly: bytes that are not UTF-8 JSON, a key
    /// named twice, a key other than `allowedToolNames` and
    /// `excludedToolNames`, or a value of the wrong type is an error, with
    /// what was wrong and the state to use instead ([`RunStateError::state`]),
    /// which admits nothing: a part of the wrong type is unreadable (and
    /// refuses with its own gate's reason), anything else makes the whole
    /// run unreadable. [`RunState::from_bytes`] returns that state directly.
    pub fn parse(bytes: &[u8]) -> Result<RunState, RunStateError> {
        let whole = |message: String| RunStateError {
            message,
            state: RunState::unreadable(),
        };
        let v = crate::json::parse_strict(bytes).map_err(|e| whole(e.to_string()))?;
        let obj = v
            .as_object()
            .ok_or_else(|| whole("a stored run is a JSON object".into()))?;
        if let Some(k) = obj.keys().find(|k| !STORED_KEYS.contains(&k.as_str())) {
            return Err(whole(format!(
                "unknown key `{k}` (a stored run has `allowedToolNames` and `excludedToolNames`)"
            )));
        }
        let mut problems = Vec::new();
        let allowed = match obj.get("allowedToolNames") {
            None | Some(Value::Null) => AllowList::Unrestricted,
            Some(v) => names(v).map(AllowList::Only).unwrap_or_else(|| {
                problems.push("`allowedToolNames` is null or a list of names");
                AllowList::Unreadable
            }),
        };
        let excluded = match obj.get("excludedToolNames") {
            // A run stored before exclusions existed: none stored, the live list holds.
            None => Exclusions::Names(Vec::new()),
            Some(v) => names(v).map(Exclusions::Names).unwrap_or_else(|| {
                problems.push("`excludedToolNames` is a list of names");
                Exclusions::Unreadable
            }),
        };
        let state = RunState { allowed, excluded };
        match problems.is_empty() {
            true => Ok(state),
            false => Err(RunStateError {
                message: problems.join("; "),
                state,
            }),
        }
    }

    /// Read the stored form. Never fails: what cannot be read admits nothing
    /// (see [`RunState::parse`] for what cannot be read).
    pub fn from_bytes(bytes: &[u8]) -> RunState {
        RunState::parse(bytes).unwrap_or_else(|e| e.state)
    }

    /// [`RunState::from_bytes`] of a string.
    pub fn from_json(text: &str) -> RunState {
        RunState::from_bytes(text.as_bytes())
    }

    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert(
            "allowedToolNames".into(),
            match &self.allowed {
                AllowList::Unrestricted => Value::Null,
                AllowList::Only(n) => Value::from(n.clone()),
                // Written so that it reads back unreadable again.
                AllowList::Unreadable => Value::Bool(false),
            },
        );
        match &self.excluded {
            Exclusions::Names(n) if n.is_empty() => {}
            Exclusions::Names(n) => {
                m.insert("excludedToolNames".into(), Value::from(n.clone()));
            }
            Exclusions::Unreadable => {
                m.insert("excludedToolNames".into(), Value::Bool(false));
            }
        }
        Value::Object(m)
    }

    pub fn to_json(&self) -> String {
        self.to_value().to_string()
    }
}

/// The schema of the stored form that [`RunState::to_json`] writes for a
/// readable run (what `toolgate run start|resume` print, and what
/// [`RunState::parse`] reads without error).
#[cfg(feature = "schema")]
impl schemars::JsonSchema for RunState {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RunState".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A run's stored state: the skill allow-list and the exclusions it started with. Any other key makes it unreadable (it then admits no tool).",
            "type": "object",
            "properties": {
                "allowedToolNames": {
                    "description": "The run's skill allow-list: null when no skill declared one (no restriction), else only these names (an empty list allows no tool but the skill loader).",
                    "type": ["array", "null"],
                    "items": {"type": "string"},
                },
                "excludedToolNames": {
                    "description": "The exclusions the run carries from its start; written only when not empty.",
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                },
            },
            "required": ["allowedToolNames"],
            "additionalProperties": false,
        })
    }
}

fn names(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_str().map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn only(n: &[&str]) -> AllowList {
        AllowList::Only(n.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn intersections_of_gate_semantics_case_13() {
        assert_eq!(
            intersect(&only(&["read_a"]), &AllowList::Unrestricted),
            only(&["read_a"])
        );
        assert_eq!(
            intersect(&AllowList::Unrestricted, &AllowList::Unrestricted),
            AllowList::Unrestricted
        );
        assert_eq!(
            intersect(
                &only(&["approve", "read_a", "read_b"]),
                &only(&["read_a", "read_c"])
            ),
            only(&["read_a"])
        );
        assert_eq!(intersect(&only(&["read_a"]), &only(&[])), only(&[]));
    }

    #[test]
    fn stored_form_writes_exclusions_only_when_non_empty() {
        let r = RunState::default();
        assert_eq!(r.to_json(), r#"{"allowedToolNames":null}"#);
        let r = RunState {
            allowed: only(&["a"]),
            excluded: Exclusions::Names(vec!["delete_record".into()]),
        };
        assert_eq!(
            r.to_json(),
            r#"{"allowedToolNames":["a"],"excludedToolNames":["delete_record"]}"#
        );
        assert_eq!(RunState::from_json(&r.to_json()), r);
    }

    #[test]
    fn stored_values_that_are_not_lists_admit_nothing() {
        let r =
            RunState::from_json(r#"{"allowedToolNames":null,"excludedToolNames":"delete_record"}"#);
        assert_eq!(r.excluded, Exclusions::Unreadable);
        let r = RunState::from_json(r#"{"allowedToolNames":null,"excludedToolNames":[1]}"#);
        assert_eq!(r.excluded, Exclusions::Unreadable);
        let r = RunState::from_json(r#"{"allowedToolNames":{}}"#);
        assert_eq!(r.allowed, AllowList::Unreadable);
        assert_eq!(
            RunState::from_json("nonsense").excluded,
            Exclusions::Unreadable
        );
        // Unreadable survives a round trip.
        let back = RunState::from_json(&r.to_json());
        assert_eq!(back.allowed, AllowList::Unreadable);
    }

    #[test]
    fn misspelt_duplicate_and_mistyped_keys_admit_nothing() {
        for text in [
            r#"{"allowed_tool_names":["a"]}"#,
            r#"{"allowedToolNames":["a"],"excluded_tool_names":["x"]}"#,
            r#"{"allowedToolNames":["a"],"allowedToolNames":null}"#,
            r#"{"allowedToolNames":null,"excludedToolNames":["x"],"excludedToolNames":[]}"#,
            r#"[]"#,
            r#"{"allowedToolNames":null} trailing"#,
        ] {
            assert_eq!(RunState::from_json(text), RunState::unreadable(), "{text}");
            assert!(RunState::parse(text.as_bytes()).is_err(), "{text}");
        }
        for (text, allowed, excluded) in [
            (r#"{"allowedToolNames":"a"}"#, false, true),
            (r#"{"allowedToolNames":[null]}"#, false, true),
            (
                r#"{"allowedToolNames":null,"excludedToolNames":null}"#,
                true,
                false,
            ),
        ] {
            let e = RunState::parse(text.as_bytes()).unwrap_err();
            assert_eq!(e.state.allowed != AllowList::Unreadable, allowed, "{text}");
            assert_eq!(
                e.state.excluded != Exclusions::Unreadable,
                excluded,
                "{text}"
            );
            assert!(!e.state.is_readable());
        }
        assert_eq!(
            RunState::from_bytes(b"{\"allowedToolNames\":[\"\xff\"]}"),
            RunState::unreadable()
        );
        assert_eq!(
            RunState::parse(br#"{"allowedToolNames":["a"],"allowedToolNames":null}"#)
                .unwrap_err()
                .to_string(),
            "unreadable stored run: duplicate key `allowedToolNames` at line 1 column 44"
        );
        assert_eq!(
            RunState::parse(br#"{"allowed_tool_names":["a"]}"#)
                .unwrap_err()
                .to_string(),
            "unreadable stored run: unknown key `allowed_tool_names` (a stored run has `allowedToolNames` and `excludedToolNames`)"
        );
    }

    #[test]
    fn a_run_stored_before_exclusions_reads_back_without_them() {
        let r = RunState::from_json(r#"{"allowedToolNames":["read_a"]}"#);
        assert_eq!(r.excluded, Exclusions::Names(vec![]));
        assert_eq!(r.allowed, only(&["read_a"]));
    }

    #[test]
    fn resume_narrows_and_keeps_exclusions_of_both() {
        let stored = RunState {
            allowed: only(&["a", "b"]),
            excluded: Exclusions::Names(vec!["x".into()]),
        };
        let live = RunState {
            allowed: AllowList::Unrestricted,
            excluded: Exclusions::Names(vec!["y".into()]),
        };
        let r = stored.resume(&live);
        assert_eq!(r.allowed, only(&["a", "b"]));
        assert_eq!(r.excluded, Exclusions::Names(vec!["x".into(), "y".into()]));
    }
}
