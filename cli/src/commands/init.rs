//! `init`: a new project that passes `check` and `test`, to start from.

use std::path::PathBuf;

use clap::Args;

use super::Res;
use crate::io::{write_atomic, Failure};

#[derive(Args)]
pub struct InitArgs {
    /// The directory (made when missing). Default: the current directory.
    #[arg(default_value = ".")]
    dir: PathBuf,
}

/// The files of a new project: (name, text).
const FILES: &[(&str, &str)] = &[
    (
        "toolgate.toml",
        "# A toolgate project: the registry of the tools that exist, and the\n\
         # policy files that govern them (docs: README.md, grammar/README.md).\n\
         registry = \"registry.toml\"\n\
         policies = [\"policy.tg\"]\n",
    ),
    (
        "registry.toml",
        "# The tools that exist (or import them: toolgate registry import-mcp).\n\
         [[tool]]\n\
         name = \"search_pages\"\n\
         group = \"content\"\n\
         \n\
         [[tool]]\n\
         name = \"update_page\"\n\
         group = \"editing\"\n\
         \n\
         [[tool]]\n\
         name = \"delete_page\"\n\
         group = \"editing\"\n",
    ),
    (
        "policy.tg",
        "# Who is offered which tools. `toolgate check` validates this file,\n\
         # `toolgate test` runs policy.test.toml against it.\n\
         \n\
         # What the tools' data is (a ladder of classes, lowest first), and\n\
         # which provider may see which class (its trust zone's ceiling).\n\
         group content { class editorContent }\n\
         group editing { class editorContent }\n\
         provider claude-eu { zone externalEu }\n\
         \n\
         # The editors' chat may search and edit, but never delete.\n\
         configuration editor-chat {\n  \
           provider claude-eu\n  \
           groups [content, editing]\n  \
           exclude [delete_page]\n\
         }\n",
    ),
    (
        "policy.test.toml",
        "# Policy tests: each case asks the compiled policy one question.\n\
         [[case]]\n\
         name = \"editors may search\"\n\
         configuration = \"editor-chat\"\n\
         tool = \"search_pages\"\n\
         expect = \"offered\"\n\
         \n\
         [[case]]\n\
         name = \"editors never delete\"\n\
         configuration = \"editor-chat\"\n\
         tool = \"delete_page\"\n\
         expect = \"configurationExcluded\"\n",
    ),
];

pub fn init(a: InitArgs) -> Res {
    std::fs::create_dir_all(&a.dir)?;
    // Never overwrite: a file already there stops the whole scaffold.
    if let Some((name, _)) = FILES.iter().find(|(n, _)| a.dir.join(n).exists()) {
        return Err(Failure::Usage(format!(
            "{}: already exists; `toolgate init` writes only into a directory without a project",
            a.dir.join(name).display()
        )));
    }
    for (name, text) in FILES {
        write_atomic(&a.dir.join(name), text.as_bytes())?;
    }
    crate::io::note(&format!(
        "created a project in {}: run `toolgate check {0}` and `toolgate test {0}`\n",
        a.dir.display()
    ));
    Ok(0)
}
