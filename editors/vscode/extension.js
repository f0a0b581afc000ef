// The toolgate extension: the grammar and language are declared in
// package.json; this starts `toolgate lsp` over stdio for .tg files.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("toolgate").get("path") || "toolgate";
  const server = { command, args: ["lsp"] };
  client = new LanguageClient(
    "toolgate",
    "toolgate",
    { run: server, debug: server },
    {
      documentSelector: [
        { scheme: "file", language: "toolgate" },
        { scheme: "file", pattern: "**/toolgate.toml" },
      ],
    }
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
