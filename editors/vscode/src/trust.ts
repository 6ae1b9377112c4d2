/**
 * Workspace Trust. relay.toml can declare external passes (`command = [...]`) and `on_save`
 * pipelines that the language server runs; opening a cloned folder must not run them. The
 * server runs no external command until told the workspace is trusted: `trusted` in the
 * initialization options, then `workspace/didChangeConfiguration` with `settings.trusted`
 * when the user grants trust (VS Code never revokes trust without a reload).
 */
import * as vscode from 'vscode';

/** The part of a language client this module needs. */
export interface Notifier {
  sendNotification(method: string, params: unknown): Promise<void>;
}

/** The trust flag the server reads from `initializationOptions`. */
export function trustOptions(): { trusted: boolean } {
  return { trusted: vscode.workspace.isTrusted };
}

/** Tells the running client's server when the user grants trust to the workspace. */
export function forwardTrustGrants(currentClient: () => Notifier | undefined): vscode.Disposable {
  return vscode.workspace.onDidGrantWorkspaceTrust(() => {
    void currentClient()?.sendNotification('workspace/didChangeConfiguration', {
      settings: { trusted: true },
    });
  });
}
