//! The protocol loop: JSON-RPC over stdio (rust-analyzer's `lsp-server`),
//! one thread, requests answered in order from the [`Workspace`].

use std::error::Error;
use std::path::PathBuf;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    Notification as _, PublishDiagnostics,
};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentSymbolRequest, Formatting, GotoDefinition, HoverRequest,
    References, Rename, Request as _,
};
use lsp_types::{
    CodeActionOrCommand, CodeActionProviderCapability, CompletionOptions, CompletionResponse,
    DocumentSymbolResponse, GotoDefinitionResponse, Hover, HoverContents, HoverProviderCapability,
    MarkupContent, MarkupKind, OneOf, PublishDiagnosticsParams, ServerCapabilities,
    TextDocumentContentChangeEvent, TextDocumentPositionParams, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextEdit, Url,
};
use serde_json::Value;
use toolgate_compiler::diagnostics::NameKind;
use toolgate_compiler::syntax::formatter;

use crate::convert::url_of;
use crate::index::Index;
use crate::text::LineIndex;
use crate::workspace::{ProjectState, Publish, Workspace};
use crate::{actions, complete, hover, navigate, transport};

pub type BoxError = Box<dyn Error + Send + Sync>;

pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec!["[".into(), ",".into(), " ".into()]),
            ..CompletionOptions::default()
        }),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Left(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        ..ServerCapabilities::default()
    }
}

/// Serve on stdin/stdout until the client shuts the server down. Frames are
/// read by [`crate::transport`] under its caps; bad ones are answered on
/// stdout and logged on stderr.
pub fn run_stdio() -> Result<(), BoxError> {
    let input = std::io::BufReader::new(std::io::stdin());
    let (connection, io) = transport::connect(input, std::io::stdout(), std::io::stderr());
    let served = serve(&connection);
    drop(connection);
    io.join()?;
    served
}

/// Serve one connection: initialize, then every message until `shutdown`.
pub fn serve(connection: &Connection) -> Result<(), BoxError> {
    let caps = serde_json::to_value(capabilities())?;
    let (id, _params) = connection.initialize_start()?;
    connection.initialize_finish(
        id,
        serde_json::json!({
            "capabilities": caps,
            "serverInfo": {"name": "toolgate", "version": env!("CARGO_PKG_VERSION")},
        }),
    )?;
    let mut ws = Workspace::new();
    for msg in &connection.receiver {
        match msg {
            Message::Request(req) => {
                if connection.handle_shutdown(&req)? {
                    return Ok(());
                }
                let resp = respond(&ws, req);
                connection.sender.send(Message::Response(resp))?;
            }
            Message::Notification(n) => {
                for (path, diagnostics) in notify(&mut ws, n) {
                    let Some(uri) = url_of(&path) else { continue };
                    let params = PublishDiagnosticsParams::new(uri, diagnostics, None);
                    connection
                        .sender
                        .send(Message::Notification(Notification::new(
                            PublishDiagnostics::METHOD.to_string(),
                            params,
                        )))?;
                }
            }
            Message::Response(_) => {}
        }
    }
    Ok(())
}

fn path_of(uri: &Url) -> Option<PathBuf> {
    uri.to_file_path().ok()
}

/// Apply one change event to a text (full replacement, or a range).
fn apply(text: &mut String, change: TextDocumentContentChangeEvent) {
    match change.range {
        None => *text = change.text,
        Some(r) => {
            let li = LineIndex::new(text);
            let (a, b) = (li.offset(r.start), li.offset(r.end));
            text.replace_range(a..b.max(a), &change.text);
        }
    }
}

fn parse<P: serde::de::DeserializeOwned>(v: Value) -> Option<P> {
    serde_json::from_value(v).ok()
}

fn notify(ws: &mut Workspace, n: Notification) -> Publish {
    match n.method.as_str() {
        DidOpenTextDocument::METHOD => {
            let Some(p): Option<lsp_types::DidOpenTextDocumentParams> = parse(n.params) else {
                return Vec::new();
            };
            match path_of(&p.text_document.uri) {
                Some(path) => ws.set_text(&path, p.text_document.text),
                None => Vec::new(),
            }
        }
        DidChangeTextDocument::METHOD => {
            let Some(p): Option<lsp_types::DidChangeTextDocumentParams> = parse(n.params) else {
                return Vec::new();
            };
            let Some(path) = path_of(&p.text_document.uri) else {
                return Vec::new();
            };
            let mut text = ws.text_of(&path).unwrap_or_default();
            for c in p.content_changes {
                apply(&mut text, c);
            }
            ws.set_text(&path, text)
        }
        DidCloseTextDocument::METHOD => {
            let Some(p): Option<lsp_types::DidCloseTextDocumentParams> = parse(n.params) else {
                return Vec::new();
            };
            path_of(&p.text_document.uri)
                .map(|path| ws.close(&path))
                .unwrap_or_default()
        }
        DidSaveTextDocument::METHOD => {
            let Some(p): Option<lsp_types::DidSaveTextDocumentParams> = parse(n.params) else {
                return Vec::new();
            };
            match path_of(&p.text_document.uri).and_then(|path| Some((ws.text_of(&path)?, path))) {
                Some((text, path)) => ws.set_text(&path, text),
                None => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

fn respond(ws: &Workspace, req: Request) -> Response {
    let id = req.id.clone();
    match answer(ws, req) {
        Ok(v) => Response::new_ok(id, v),
        Err((code, message)) => Response::new_err(id, code as i32, message),
    }
}

type Answer = Result<Value, (ErrorCode, String)>;

fn params<P: serde::de::DeserializeOwned>(req: Request) -> Result<P, (ErrorCode, String)> {
    serde_json::from_value(req.params).map_err(|e| (ErrorCode::InvalidParams, e.to_string()))
}

fn to_value(v: impl serde::Serialize) -> Answer {
    serde_json::to_value(v).map_err(|e| (ErrorCode::InternalError, e.to_string()))
}

/// The document's path, text and the byte offset of a position.
fn at(ws: &Workspace, p: &TextDocumentPositionParams) -> Option<(PathBuf, String, usize)> {
    let path = path_of(&p.text_document.uri)?;
    let text = ws.text_of(&path)?;
    let offset = LineIndex::new(&text).offset(p.position);
    Some((path, text, offset))
}

/// The name at a position, with its project and where it stands in the
/// line index of its document: what hover, definition and references answer.
struct NameAt<'w> {
    state: &'w ProjectState,
    kind: NameKind,
    name: String,
    range: lsp_types::Range,
}

fn name_at<'w>(ws: &'w Workspace, p: &TextDocumentPositionParams) -> Option<NameAt<'w>> {
    let (path, text, offset) = at(ws, p)?;
    let state = ws.project_of(&path)?;
    let (kind, name, range) = navigate::name_at(&text, offset)?;
    let range = LineIndex::new(&text).range(range);
    Some(NameAt {
        state,
        kind,
        name,
        range,
    })
}

/// What answers one kind of request.
type Handler = fn(&Workspace, Request) -> Answer;

/// The requests answered, each by its own function.
const HANDLERS: &[(&str, Handler)] = &[
    (Completion::METHOD, completion),
    (HoverRequest::METHOD, hover_card),
    (GotoDefinition::METHOD, definition),
    (References::METHOD, references),
    (Rename::METHOD, rename),
    (Formatting::METHOD, formatting),
    (DocumentSymbolRequest::METHOD, document_symbols),
    (CodeActionRequest::METHOD, code_actions),
];

fn answer(ws: &Workspace, req: Request) -> Answer {
    match HANDLERS.iter().find(|(m, _)| *m == req.method) {
        Some((_, handler)) => handler(ws, req),
        None => Err((
            ErrorCode::MethodNotFound,
            format!("`{}` is not supported", req.method),
        )),
    }
}

fn completion(ws: &Workspace, req: Request) -> Answer {
    let empty = Index::default();
    let p: lsp_types::CompletionParams = params(req)?;
    let Some((path, text, offset)) = at(ws, &p.text_document_position) else {
        return Ok(Value::Null);
    };
    let state = ws.project_of(&path);
    let items = complete::completions(
        &text,
        offset,
        state.map(|s| &s.index).unwrap_or(&empty),
        state.and_then(|s| s.registry()),
    );
    to_value(CompletionResponse::Array(items))
}

fn hover_card(ws: &Workspace, req: Request) -> Answer {
    let p: lsp_types::HoverParams = params(req)?;
    let found = name_at(ws, &p.text_document_position_params).map(|n| Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: hover::hover(n.state, n.kind, &n.name),
        }),
        range: Some(n.range),
    });
    to_value(found)
}

fn definition(ws: &Workspace, req: Request) -> Answer {
    let p: lsp_types::GotoDefinitionParams = params(req)?;
    let found = name_at(ws, &p.text_document_position_params)
        .map(|n| GotoDefinitionResponse::Array(navigate::definitions(n.state, n.kind, &n.name)));
    to_value(found)
}

fn references(ws: &Workspace, req: Request) -> Answer {
    let p: lsp_types::ReferenceParams = params(req)?;
    let found = name_at(ws, &p.text_document_position)
        .map(|n| navigate::references(n.state, n.kind, &n.name, p.context.include_declaration));
    to_value(found)
}

fn rename(ws: &Workspace, req: Request) -> Answer {
    let p: lsp_types::RenameParams = params(req)?;
    let failed = |m: &str| (ErrorCode::RequestFailed, m.to_string());
    let (path, text, offset) =
        at(ws, &p.text_document_position).ok_or_else(|| failed("unknown document"))?;
    let state = ws
        .project_of(&path)
        .ok_or_else(|| failed("the file belongs to no toolgate project"))?;
    let (kind, name, _) =
        navigate::name_at(&text, offset).ok_or_else(|| failed("no name to rename here"))?;
    let edit = navigate::rename(state, kind, &name, &p.new_name).map_err(|m| failed(&m))?;
    to_value(edit)
}

fn formatting(ws: &Workspace, req: Request) -> Answer {
    let p: lsp_types::DocumentFormattingParams = params(req)?;
    let edits = path_of(&p.text_document.uri)
        .and_then(|path| ws.text_of(&path))
        .and_then(|text| {
            // A file that does not parse is not formatted (its
            // syntax error is already shown).
            let formatted = formatter::format(&text).ok()?;
            let whole = LineIndex::new(&text).range(0..text.len());
            Some(if formatted == text {
                Vec::new()
            } else {
                vec![TextEdit::new(whole, formatted)]
            })
        });
    to_value(edits)
}

fn document_symbols(ws: &Workspace, req: Request) -> Answer {
    let p: lsp_types::DocumentSymbolParams = params(req)?;
    let symbols = path_of(&p.text_document.uri).and_then(|path| {
        let state = ws.project_of(&path)?;
        let facts = state.files.get(&crate::workspace::canonical(&path))?;
        Some(DocumentSymbolResponse::Nested(facts.symbols.clone()))
    });
    to_value(symbols)
}

fn code_actions(ws: &Workspace, req: Request) -> Answer {
    let p: lsp_types::CodeActionParams = params(req)?;
    let actions = path_of(&p.text_document.uri).and_then(|path| {
        let state = ws.project_of(&path)?;
        let project = state.project.as_ref()?;
        let file = state.file_id(&crate::workspace::canonical(&path))?;
        Some(
            actions::code_actions(
                &state.problems,
                &state.findings,
                &project.sources,
                &state.paths,
                &p.text_document.uri,
                file,
                p.range,
            )
            .into_iter()
            .map(CodeActionOrCommand::CodeAction)
            .collect::<Vec<_>>(),
        )
    });
    to_value(actions.unwrap_or_default())
}
