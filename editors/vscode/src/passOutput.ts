import * as path from 'path';
import * as vscode from 'vscode';
import { LanguageClient, RequestType } from 'vscode-languageclient/node';

/** Params of the custom request `relay/passOutput`. */
export interface PassOutputParams {
  textDocument: { uri: string };
  pipeline: string;
}

/** One pass of the pipeline: the module as printed after it ran. */
export interface PassStage {
  pass: string;
  text: string;
  timeMs: number;
  changed: boolean;
}

export interface PassOutputResult {
  stages: PassStage[];
  error?: string;
}

export const PassOutputRequest = new RequestType<PassOutputParams, PassOutputResult, void>('relay/passOutput');

export const PASS_OUTPUT_SCHEME = 'relay-pass-output';

/** How many runs of "Show Pass Output" keep their virtual documents alive. */
const KEEP_RUNS = 5;

/**
 * Read-only virtual documents for the stages of a pipeline run:
 * `relay-pass-output:/<run>/<index>/<file>.<pass>.relay`.
 */
export class PassOutputProvider implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly runs: string[][] = [];
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private nextRun = 1;
  readonly onDidChange = this.changed.event;

  /** Stores one run's documents; returns their URIs in the same order. */
  addRun(source: vscode.Uri, docs: { label: string; text: string }[]): vscode.Uri[] {
    const run = this.nextRun++;
    const base = path.basename(source.path).replace(/\.(relay|rly)$/, '') || 'module';
    const uris = docs.map((d, i) => {
      const label = d.label.replace(/[^A-Za-z0-9_.-]+/g, '_') || 'stage';
      return vscode.Uri.from({ scheme: PASS_OUTPUT_SCHEME, path: `/${run}/${i}/${base}.${label}.relay` });
    });
    uris.forEach((u, i) => this.texts.set(u.toString(), docs[i].text));
    this.runs.push(uris.map((u) => u.toString()));
    while (this.runs.length > KEEP_RUNS) {
      for (const key of this.runs.shift() ?? []) {
        this.texts.delete(key);
      }
    }
    return uris;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return (
      this.texts.get(uri.toString()) ??
      '// This pass output is no longer available: run "Relay: Show Pass Output…" again.\n'
    );
  }

  dispose(): void {
    this.changed.dispose();
    this.texts.clear();
  }
}

function isResult(value: unknown): value is PassOutputResult {
  return !!value && typeof value === 'object' && Array.isArray((value as PassOutputResult).stages);
}

function ms(t: number): string {
  return `${Number.isFinite(t) ? t.toFixed(t < 10 ? 2 : 1) : '?'} ms`;
}

interface StagePick extends vscode.QuickPickItem {
  left: vscode.Uri;
  right: vscode.Uri;
  title: string;
  beside?: boolean;
}

/** Runs `relay/passOutput` for `document` and shows the stages. */
export async function showPassOutput(
  client: LanguageClient,
  provider: PassOutputProvider,
  document: vscode.TextDocument,
  pipeline: string,
): Promise<void> {
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: `Relay: running ${pipeline}` },
    () =>
      client.sendRequest(PassOutputRequest, {
        textDocument: { uri: document.uri.toString() },
        pipeline,
      }),
  );
  if (!isResult(result)) {
    void vscode.window.showErrorMessage('Relay: the server gave no pass output (unexpected answer to relay/passOutput).');
    return;
  }
  const stages = result.stages.map((s) => ({
    pass: String(s.pass ?? '?'),
    text: String(s.text ?? ''),
    timeMs: Number(s.timeMs),
    changed: !!s.changed,
  }));

  const log = client.outputChannel;
  log.appendLine(`relay/passOutput ${document.uri.fsPath || document.uri.toString()}  pipeline: ${pipeline}`);
  stages.forEach((s, i) => {
    log.appendLine(`  ${String(i + 1).padStart(2)}. ${s.pass.padEnd(32)} ${ms(s.timeMs).padStart(10)}  ${s.changed ? 'changed' : 'unchanged'}`);
  });
  if (result.error) {
    log.appendLine(`  error: ${result.error}`);
    void vscode.window.showErrorMessage(`Relay: ${pipeline} failed: ${result.error}`);
  }
  if (stages.length === 0) {
    if (!result.error) {
      void vscode.window.showInformationMessage(`Relay: ${pipeline} ran no pass.`);
    }
    return;
  }

  const uris = provider.addRun(document.uri, [
    { label: 'input', text: document.getText() },
    ...stages.map((s) => ({ label: s.pass, text: s.text })),
  ]);
  const base = path.basename(document.uri.path);
  const total = stages.reduce((acc, s) => acc + (Number.isFinite(s.timeMs) ? s.timeMs : 0), 0);
  const last = stages.length;

  const picks: StagePick[] = [
    {
      label: '$(diff) Input ↔ final output',
      description: `${stages.length} pass${stages.length === 1 ? '' : 'es'}, ${ms(total)}`,
      left: uris[0],
      right: uris[last],
      title: `${base}: input ↔ ${pipeline}`,
    },
    {
      label: '$(go-to-file) Final output beside the source',
      left: uris[last],
      right: uris[last],
      title: '',
      beside: true,
    },
    ...stages.map((s, i) => ({
      label: `${i + 1}. ${s.pass}`,
      description: ms(s.timeMs),
      detail: s.changed ? 'changed the module' : 'left the module unchanged',
      left: uris[i],
      right: uris[i + 1],
      title: `${base}: ${i === 0 ? 'input' : stages[i - 1].pass} ↔ ${s.pass} (${ms(s.timeMs)})`,
    })),
  ];

  const pick =
    stages.length === 1
      ? picks[2]
      : await vscode.window.showQuickPick(picks, {
          title: `Relay pass output: ${pipeline}`,
          placeHolder: 'Pick a stage to diff with the one before it',
          matchOnDescription: true,
          matchOnDetail: true,
        });
  if (!pick) {
    return;
  }
  if (pick.beside) {
    const doc = await vscode.workspace.openTextDocument(pick.right);
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
    return;
  }
  await vscode.commands.executeCommand('vscode.diff', pick.left, pick.right, pick.title, {
    viewColumn: vscode.ViewColumn.Beside,
    preview: true,
  });
}
