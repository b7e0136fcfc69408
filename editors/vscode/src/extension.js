// The WorldSpec extension: starts `worldspec lsp` (stdio) for .world files.
//
// The command comes from the `worldspec.server.command` setting (default: `worldspec lsp`,
// the command a `pip install 'worldspec[lsp]'` puts on the PATH). Everything the editor
// shows (diagnostics, hover, navigation, rename, completion, outline, formatting, quick
// fixes) is the server's; this file only connects the two.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function serverOptions() {
  const configured = vscode.workspace.getConfiguration("worldspec").get("server.command");
  const command = Array.isArray(configured) && configured.length > 0 ? configured : ["worldspec", "lsp"];
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
  const expand = (part) => (folder ? part.split("${workspaceFolder}").join(folder.uri.fsPath) : part);
  return {
    command: expand(command[0]),
    args: command.slice(1).map(expand),
    transport: TransportKind.stdio,
    options: folder ? { cwd: folder.uri.fsPath } : undefined,
  };
}

async function start(context) {
  const output = vscode.window.createOutputChannel("WorldSpec");
  client = new LanguageClient("worldspec", "WorldSpec", serverOptions(), {
    documentSelector: [{ scheme: "file", language: "worldspec" }, { scheme: "untitled", language: "worldspec" }],
    synchronize: { fileEvents: vscode.workspace.createFileSystemWatcher("**/*.world") },
    outputChannel: output,
  });
  try {
    await client.start();
  } catch (err) {
    const command = serverOptions();
    vscode.window.showErrorMessage(
      `WorldSpec: could not start the language server '${[command.command, ...command.args].join(" ")}' ` +
        `(${err && err.message ? err.message : err}). Install it with: pip install 'worldspec[lsp]', ` +
        `or set 'worldspec.server.command'.`,
    );
  }
  context.subscriptions.push(output);
}

function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand("worldspec.restartServer", async () => {
      if (client) {
        await client.stop();
      }
      await start(context);
    }),
  );
  return start(context);
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
