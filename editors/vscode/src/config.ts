import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';

export const LANGUAGE_ID = 'relay';

/**
 * "Relay: Apply Pass…": a quick pick of every pass; also the command of the server's
 * "Apply pass…" code action.
 */
export const APPLY_PASS_COMMAND = 'relay.applyPass';

/** Commands this extension contributes itself (see package.json). */
export const OWN_COMMANDS = new Set([
  APPLY_PASS_COMMAND,
  'relay.applyPipeline',
  'relay.showPassOutput',
  'relay.restartServer',
  'relay.findPattern',
  'relay.clearPatternMatches',
  'relay.runFunction',
  'relay.checkSemantics',
]);

export interface ServerSettings {
  /** The binary, with `~` and `${workspaceFolder}` expanded. */
  command: string;
  /** Arguments: `lsp` followed by `relay.server.extraArgs`. */
  args: string[];
}

function expandPath(p: string): string {
  let out = p.trim();
  if (out === '~' || out.startsWith('~/')) {
    out = path.join(os.homedir(), out.slice(1));
  }
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (folder) {
    out = out.replace(/\$\{workspaceFolder\}/g, folder);
  }
  return out;
}

export function serverSettings(): ServerSettings {
  const cfg = vscode.workspace.getConfiguration('relay');
  const command = expandPath(cfg.get<string>('server.path') || 'relay');
  const extra = cfg.get<string[]>('server.extraArgs') ?? [];
  return { command, args: ['lsp', ...extra.map(String)] };
}

/** The binary alone, for one-shot CLI calls such as `relay passes --json`. */
export function serverPath(): string {
  return serverSettings().command;
}

export function defaultPipeline(): string {
  return vscode.workspace.getConfiguration('relay').get<string>('defaultPipeline') || 'InferType, FoldConstant';
}
