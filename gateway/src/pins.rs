//! Pinned tool definitions (docs/gateway.md, "Pinned definitions"): the
//! registry the table was compiled from holds each remote tool's
//! definition as it was imported and reviewed; a server that lists another
//! one ("rug pull") has that tool withheld until `registry sync --write`.
//! Prompts likewise: a prompt is offered only when the registry pins its
//! definition (title, description, arguments) as its server lists it.
//!
//! The registry file is the pin. It is trusted only when its SHA-256 is
//! the registry digest the table records, so a table and a registry from
//! different reviews never pair: then no pin holds, and every upstream tool
//! is withheld (fail closed) until the two agree again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use toolgate_runtime::Table;

/// The largest registry file read.
const MAX_REGISTRY_BYTES: u64 = 512 << 20;

/// What a listed definition is, against the pins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pin {
    /// The definition is the pinned one (or pinning is off).
    Holds,
    /// Another definition than the pinned one, no pin for the tool, or no
    /// registry that pairs with the table.
    Broken,
}

/// The pins of one registry file.
#[derive(Debug)]
struct Loaded {
    /// The table registry digest they were checked against.
    registry_digest: String,
    /// The pins; `None` when the file did not pair.
    digests: Option<Pinned>,
}

/// Registry name -> (its server, `sha256:` digest of its definition), for
/// tools and for prompts. A pin holds for the definition as listed by that
/// server only.
#[derive(Debug, Default)]
pub(crate) struct Pinned {
    pub tools: HashMap<String, (String, String)>,
    pub prompts: HashMap<String, (String, String)>,
}

impl Pinned {
    fn check(
        map: &HashMap<String, (String, String)>,
        name: &str,
        server: &str,
        digest: &str,
    ) -> Pin {
        match map.get(name) {
            Some((s, pinned)) if s == server && pinned == digest => Pin::Holds,
            _ => Pin::Broken,
        }
    }
}

/// The pins, following the table: re-read when the table's registry digest changes.
pub struct Pins {
    file: Option<PathBuf>,
    loaded: Mutex<Option<std::sync::Arc<Loaded>>>,
}

/// The pins of `file` for `table`, or why the two do not pair.
pub(crate) fn load(file: &Path, table: &Table) -> Result<Pinned, String> {
    let bytes = toolgate_runtime::host::read_file(file, MAX_REGISTRY_BYTES)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let digest = toolgate_runtime::format::sha256_hex(&bytes);
    let want = &table.spec().registry_digest;
    if &digest != want {
        return Err(format!(
            "{}: its SHA-256 is {digest}, and the table was compiled from a registry whose SHA-256 is {want}: no tool definition is pinned until they pair (recompile the table, or point `registry` at the registry it was compiled from)",
            file.display()
        ));
    }
    let text = String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8", file.display()))?;
    let is_json = file.extension().is_some_and(|e| e == "json");
    let mut files = toolgate_compiler::source::SourceMap::new();
    let id = files.add(file.display().to_string(), text.clone());
    let (registry, _) = toolgate_compiler::registry::parse(id, &text, is_json).map_err(|p| {
        format!(
            "{}: not a valid registry ({}; `toolgate check` shows where)",
            file.display(),
            p.code()
        )
    })?;
    let tools = registry
        .tools
        .iter()
        .filter_map(|t| match &t.origin {
            toolgate_compiler::registry::Origin::Remote { server } => Some((
                t.name.clone(),
                (
                    server.clone(),
                    toolgate_compiler::registry::definition_digest(t),
                ),
            )),
            toolgate_compiler::registry::Origin::Builtin => None,
        })
        .collect();
    let prompts = registry
        .prompts
        .iter()
        .map(|p| {
            (
                p.name.clone(),
                (
                    p.server.clone(),
                    toolgate_compiler::registry::prompts::digest(p),
                ),
            )
        })
        .collect();
    Ok(Pinned { tools, prompts })
}

/// The pins for one table (`None`: pinning is off).
pub struct PinView(Option<std::sync::Arc<Loaded>>);

impl PinView {
    /// Whether `digest`, as listed by `server`, is the pinned definition
    /// of `name`: the same definition from another server is not.
    pub fn check(&self, name: &str, server: &str, digest: &str) -> Pin {
        match &self.0 {
            None => Pin::Holds,
            Some(l) => l.digests.as_ref().map_or(Pin::Broken, |d| {
                Pinned::check(&d.tools, name, server, digest)
            }),
        }
    }

    /// Whether `digest`, as listed by `server`, is the pinned definition
    /// of the prompt the gateway names `name`.
    pub fn check_prompt(&self, name: &str, server: &str, digest: &str) -> Pin {
        match &self.0 {
            None => Pin::Holds,
            Some(l) => l.digests.as_ref().map_or(Pin::Broken, |d| {
                Pinned::check(&d.prompts, name, server, digest)
            }),
        }
    }
}

impl Pins {
    /// Pins from `file`, or none (pinning off) when `None`.
    pub fn new(file: Option<PathBuf>) -> Pins {
        Pins {
            file,
            loaded: Mutex::new(None),
        }
    }

    pub fn enabled(&self) -> bool {
        self.file.is_some()
    }

    /// Whether `digest`, listed by `server`, is the pinned definition of
    /// `name` under `table`.
    pub fn check(&self, table: &Table, name: &str, server: &str, digest: &str) -> Pin {
        self.view(table).check(name, server, digest)
    }

    /// The pins for `table`, looked up once for a whole listing.
    pub fn view(&self, table: &Table) -> PinView {
        PinView(self.for_table(table))
    }

    /// Whether the registry pairs with `table` (`Ok`), or why not.
    pub fn status(&self, table: &Table) -> Result<(), crate::Error> {
        match (&self.file, self.for_table(table)) {
            (Some(f), Some(l)) if l.digests.is_none() => {
                Err(crate::Error::Pins(load(f, table).err().unwrap_or_else(
                    || "the registry does not pair with the table".into(),
                )))
            }
            _ => Ok(()),
        }
    }

    fn for_table(&self, table: &Table) -> Option<std::sync::Arc<Loaded>> {
        let file = self.file.as_ref()?;
        let want = &table.spec().registry_digest;
        let mut slot = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = slot.as_ref() {
            if &l.registry_digest == want {
                return Some(l.clone());
            }
        }
        let digests = match load(file, table) {
            Ok(d) => Some(d),
            Err(why) => {
                crate::say(&format!("warning: {why}"));
                None
            }
        };
        let l = std::sync::Arc::new(Loaded {
            registry_digest: want.clone(),
            digests,
        });
        *slot = Some(l.clone());
        Some(l)
    }
}

#[cfg(test)]
#[path = "pins_tests.rs"]
mod tests;
