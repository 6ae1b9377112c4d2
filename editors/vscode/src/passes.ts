import { execFile } from 'child_process';
import * as vscode from 'vscode';
import {
  CodeAction,
  CodeActionRequest,
  CodeActionResolveRequest,
  Command,
  ExecuteCommandRequest,
  LanguageClient,
  WorkspaceEdit as LspWorkspaceEdit,
} from 'vscode-languageclient/node';
import { serverPath } from './config';

/** One entry of the pass list, as `relay passes --json` or `relay.listPasses` describe it. */
export interface PassInfo {
  name: string;
  description?: string;
  optLevel?: number;
}

/** Server-side commands (workspace/executeCommand). */
export const SERVER_APPLY_PIPELINE = 'relay.applyPipeline';
export const SERVER_LIST_PASSES = 'relay.listPasses';

/**
 * Accepts the shapes a pass list may come in:
 *   ["InferType", ...]
 *   [{"name": "InferType", "description": "...", "opt_level": 0}, ...]
 *   {"passes": <either of the above>}
 */
export function parsePassList(value: unknown): PassInfo[] {
  let list: unknown = value;
  if (list && typeof list === 'object' && !Array.isArray(list) && 'passes' in (list as Record<string, unknown>)) {
    list = (list as Record<string, unknown>).passes;
  }
  if (!Array.isArray(list)) {
    return [];
  }
  const out: PassInfo[] = [];
  for (const item of list) {
    if (typeof item === 'string') {
      out.push({ name: item });
    } else if (item && typeof item === 'object' && typeof (item as { name?: unknown }).name === 'string') {
      const o = item as Record<string, unknown>;
      const level = o.opt_level ?? o.optLevel;
      out.push({
        name: o.name as string,
        description: typeof o.description === 'string' ? o.description : typeof o.doc === 'string' ? o.doc : undefined,
        optLevel: typeof level === 'number' ? level : undefined,
      });
    }
  }
  return out;
}

function passesFromCli(binary: string): Promise<PassInfo[]> {
  return new Promise((resolve) => {
    execFile(binary, ['passes', '--json'], { timeout: 10_000, maxBuffer: 8 * 1024 * 1024 }, (err, stdout) => {
      if (err) {
        resolve([]);
        return;
      }
      try {
        resolve(parsePassList(JSON.parse(stdout)));
      } catch {
        resolve([]);
      }
    });
  });
}

/** Pass names: `<server path> passes --json` first, then the server's `relay.listPasses` command. */
export async function listPasses(client: LanguageClient | undefined): Promise<PassInfo[]> {
  const fromCli = await passesFromCli(serverPath());
  if (fromCli.length > 0) {
    return fromCli;
  }
  if (client?.isRunning()) {
    try {
      const result = await client.sendRequest(ExecuteCommandRequest.type, { command: SERVER_LIST_PASSES, arguments: [] });
      return parsePassList(result);
    } catch (e) {
      client.outputChannel.appendLine(`relay.listPasses failed: ${String(e)}`);
    }
  }
  return [];
}

function looksLikeWorkspaceEdit(value: unknown): value is LspWorkspaceEdit {
  return !!value && typeof value === 'object' && ('changes' in value || 'documentChanges' in value);
}

async function applyLspEdit(client: LanguageClient, edit: LspWorkspaceEdit): Promise<boolean> {
  const converted = await client.protocol2CodeConverter.asWorkspaceEdit(edit);
  return vscode.workspace.applyEdit(converted);
}

/** Commands the server announced, statically or through client/registerCapability. */
export function serverCommands(client: LanguageClient, dynamic: Set<string>): Set<string> {
  const stat = client.initializeResult?.capabilities.executeCommandProvider?.commands ?? [];
  return new Set([...stat, ...dynamic]);
}

/**
 * Applies `pipeline` to the document at `uri`.
 *
 * Preferred: `workspace/executeCommand relay.applyPipeline {uri, pipeline}`; the server
 * either applies the edit itself (`workspace/applyEdit`) and returns null, or returns a
 * WorkspaceEdit, which is applied here. When the server does not offer that command, the
 * document's code actions are asked for one whose title names the pipeline.
 */
export async function applyPipeline(
  client: LanguageClient,
  dynamicCommands: Set<string>,
  uri: vscode.Uri,
  pipeline: string,
): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(uri);
  const versionBefore = doc.version;
  if (serverCommands(client, dynamicCommands).has(SERVER_APPLY_PIPELINE)) {
    const result = await client.sendRequest(ExecuteCommandRequest.type, {
      command: SERVER_APPLY_PIPELINE,
      arguments: [{ uri: uri.toString(), pipeline }],
    });
    if (looksLikeWorkspaceEdit(result)) {
      if (!(await applyLspEdit(client, result))) {
        void vscode.window.showErrorMessage(`Relay: could not apply the edit for "${pipeline}".`);
      }
    } else if (doc.version === versionBefore) {
      // The server may have applied the edit already via workspace/applyEdit; if the text
      // did not change the pipeline was a no-op, which is worth saying.
      void vscode.window.setStatusBarMessage(`Relay: "${pipeline}" left the module unchanged`, 4000);
    }
    return;
  }

  // Fallback: a code action whose title mentions the pipeline.
  const whole = new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length));
  const actions = await client.sendRequest(CodeActionRequest.type, {
    textDocument: { uri: uri.toString() },
    range: client.code2ProtocolConverter.asRange(whole),
    context: { diagnostics: [], only: undefined, triggerKind: 1 },
  });
  const wanted = pipeline.toLowerCase();
  const match = (actions ?? []).find((a) => a.title.toLowerCase().includes(wanted));
  if (!match) {
    void vscode.window.showWarningMessage(
      `Relay: the server offers neither the "${SERVER_APPLY_PIPELINE}" command nor a code action for "${pipeline}".`,
    );
    return;
  }
  let action: CodeAction | Command = match;
  const cap = client.initializeResult?.capabilities.codeActionProvider;
  const canResolve = typeof cap === 'object' && cap.resolveProvider === true;
  if (!Command.is(action) && !action.edit && !action.command && canResolve) {
    action = await client.sendRequest(CodeActionResolveRequest.type, action);
  }
  const cmd = Command.is(action) ? action : action.command;
  if (!Command.is(action) && action.edit) {
    await applyLspEdit(client, action.edit);
  }
  if (cmd) {
    const result = await client.sendRequest(ExecuteCommandRequest.type, { command: cmd.command, arguments: cmd.arguments });
    if (looksLikeWorkspaceEdit(result)) {
      await applyLspEdit(client, result);
    }
  }
}
