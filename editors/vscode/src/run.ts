import * as path from 'path';
import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient, Range as LspRange } from 'vscode-languageclient/node';

/**
 * Running the program with the server's reference interpreter:
 * - "Run with random inputs", the code lens above each function (`relay.runFunction`): the
 *   server runs the function on seeded random inputs and refreshes the lens, whose title then
 *   shows the result's shape, dtype and min/max/mean; this command shows the same summary as
 *   a notification, and a run-time error with a button to its place.
 * - "Relay: Check Pass Semantics…" (`relay.checkSemantics`): runs a pipeline under the
 *   semantic check; agreement or the first pass that changed the result (seed, element, both
 *   values, reproducer) as a notification and in the output channel, and a diagnostic at the
 *   function.
 * Both are server commands of the same id, forwarded here (see OWN_COMMANDS in config.ts).
 */
export const RUN_FUNCTION_COMMAND = 'relay.runFunction';
export const CHECK_SEMANTICS_COMMAND = 'relay.checkSemantics';

interface FunctionRun {
  function: string;
  seed: number;
  summary: string;
  error?: { message: string; range?: LspRange | null } | null;
  stopped: boolean;
  timeMs: number;
}

interface CheckResult {
  pipeline: string;
  agree: boolean;
  checked: number;
  agreed: number;
  unchanged: number;
  notChecked: number;
  /** One line: the difference, the error, or the agreement with its counts. */
  headline: string;
  summary: string;
  difference?: {
    pass: string;
    seed: number;
    message: string;
    element?: string | null;
    before?: string | null;
    after?: string | null;
    reproducer?: string | null;
    function?: string | null;
  } | null;
  error?: string | null;
  stopped: boolean;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The lens's command: `{uri, function}` from the lens, else the function at the cursor. */
export async function runFunction(
  client: LanguageClient | undefined,
  output: vscode.OutputChannel,
  arg?: unknown,
): Promise<FunctionRun | undefined> {
  if (!client?.isRunning()) {
    void vscode.window.showErrorMessage('Relay: the language server is not running.');
    return undefined;
  }
  const given = (arg && typeof arg === 'object' ? arg : {}) as { uri?: string; function?: string; seed?: number };
  const uri = given.uri ?? vscode.window.activeTextEditor?.document.uri.toString();
  let fn = given.function;
  if (!fn) {
    fn = await vscode.window.showInputBox({ title: 'Relay: Run With Random Inputs', prompt: 'Global function to run', value: 'main' });
  }
  if (!uri || !fn) {
    return undefined;
  }
  let run: FunctionRun;
  try {
    run = await client.sendRequest(ExecuteCommandRequest.type, {
      command: RUN_FUNCTION_COMMAND,
      arguments: [{ uri, function: fn, seed: given.seed ?? 0 }],
    });
  } catch (e) {
    void vscode.window.showErrorMessage(`Relay: running @${fn} failed: ${errorText(e)}`);
    return undefined;
  }
  output.appendLine(`@${run.function} on random inputs (seed ${run.seed}, ${run.timeMs.toFixed(1)} ms): ${run.summary}`);
  if (!run.error) {
    void vscode.window.showInformationMessage(`Relay: @${run.function} (seed ${run.seed}): ${run.summary}`);
    return run;
  }
  const range = run.error.range;
  const choice = await vscode.window.showErrorMessage(
    `Relay: @${run.function} ${run.stopped ? 'was stopped' : 'failed'}: ${run.error.message}`,
    ...(range ? ['Go to Error'] : []),
  );
  if (choice === 'Go to Error' && range) {
    const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    const editor = await vscode.window.showTextDocument(document);
    const r = client.protocol2CodeConverter.asRange(range);
    editor.selection = new vscode.Selection(r.start, r.end);
    editor.revealRange(r, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }
  return run;
}

/** "Relay: Check Pass Semantics…": `{uri?, pipeline?}`, else the active editor and a prompt. */
export async function checkSemantics(
  client: LanguageClient | undefined,
  output: vscode.OutputChannel,
  defaultPipeline: string,
  arg?: unknown,
): Promise<CheckResult | undefined> {
  if (!client?.isRunning()) {
    void vscode.window.showErrorMessage('Relay: the language server is not running.');
    return undefined;
  }
  const given = (arg && typeof arg === 'object' ? arg : {}) as { uri?: string; pipeline?: string };
  const editor = vscode.window.activeTextEditor;
  const uri = given.uri ?? (editor?.document.languageId === 'relay' ? editor.document.uri.toString() : undefined);
  if (!uri) {
    void vscode.window.showWarningMessage('Relay: open a .relay or .rly file first.');
    return undefined;
  }
  const pipeline =
    given.pipeline ??
    (await vscode.window.showInputBox({
      title: 'Relay: Check Pass Semantics',
      prompt: 'Pipeline to check (passes, or the name of a relay.toml pipeline)',
      value: defaultPipeline,
      placeHolder: 'SimplifyInference, FoldConstant, FuseOps',
    }));
  if (pipeline === undefined) {
    return undefined;
  }
  let result: CheckResult;
  try {
    result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Relay: checking the semantics of ${pipeline || 'the pipeline'}`, cancellable: true },
      (_progress, token) => {
        const source = new vscode.CancellationTokenSource();
        token.onCancellationRequested(() => source.cancel());
        return client.sendRequest(
          ExecuteCommandRequest.type,
          { command: CHECK_SEMANTICS_COMMAND, arguments: [{ uri, pipeline: pipeline.trim() || undefined }] },
          source.token,
        );
      },
    );
  } catch (e) {
    void vscode.window.showErrorMessage(`Relay: checking pass semantics failed: ${errorText(e)}`);
    return undefined;
  }
  output.appendLine(`Check pass semantics: ${result.pipeline}`);
  output.append(result.summary);
  const d = result.difference;
  if (d) {
    output.appendLine(`  first difference: ${d.message}`);
    if (d.element) output.appendLine(`  ${d.element}: ${d.before} before, ${d.after} after (seed ${d.seed})`);
    const choice = await vscode.window.showErrorMessage(`Relay: ${d.message}`, ...(d.reproducer ? ['Open Reproducer'] : []));
    if (choice === 'Open Reproducer' && d.reproducer) {
      const document = await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(d.reproducer, 'before.relay')));
      await vscode.window.showTextDocument(document);
    }
  } else if (result.error) {
    void vscode.window.showErrorMessage(`Relay: ${result.headline}`);
  } else {
    void vscode.window.showInformationMessage(`Relay: ${result.headline}`);
  }
  return result;
}
