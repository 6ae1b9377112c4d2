import * as vscode from 'vscode';
import {
  ExecuteCommandRegistrationOptions,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RegistrationData,
  ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';
import { APPLY_PASS_COMMAND, defaultPipeline, LANGUAGE_ID, OWN_COMMANDS, serverSettings } from './config';
import { PASS_OUTPUT_SCHEME, PassOutputProvider, showPassOutput } from './passOutput';
import { applyPipeline, listPasses } from './passes';
import { CLEAR_PATTERN_COMMAND, clearOnEdit, clearPatternMatches, FIND_PATTERN_COMMAND, findPattern } from './findPattern';
import { registerGraphViews } from './pipelineExplorer';
import { CHECK_SEMANTICS_COMMAND, checkSemantics, RUN_FUNCTION_COMMAND, runFunction } from './run';
import { forwardTrustGrants, trustOptions } from './trust';

let client: LanguageClient | undefined;
let outputChannel: vscode.OutputChannel;
let traceChannel: vscode.OutputChannel;
/** Commands the server registered dynamically (client/registerCapability). */
const dynamicCommands = new Set<string>();

/**
 * vscode-languageclient turns every command the server announces in
 * `executeCommandProvider` into a VS Code command of the same id. The server's
 * `relay.applyPipeline` would then clash with this extension's own command of that
 * name ("command already exists") and the client would fail to start. Filter our own
 * ids out; this extension forwards them to the server itself (see passes.ts).
 */
function guardCommandRegistration(c: LanguageClient): void {
  const feature = c.getFeature(ExecuteCommandRequest.method);
  const register = feature.register.bind(feature);
  feature.register = (data: RegistrationData<ExecuteCommandRegistrationOptions>) => {
    const commands = data.registerOptions.commands ?? [];
    commands.forEach((cmd) => dynamicCommands.add(cmd));
    register({
      ...data,
      registerOptions: { ...data.registerOptions, commands: commands.filter((cmd) => !OWN_COMMANDS.has(cmd)) },
    });
  };
}

function createClient(): LanguageClient {
  const s = serverSettings();
  const executable = { command: s.command, args: s.args, transport: TransportKind.stdio };
  const serverOptions: ServerOptions = { run: executable, debug: executable };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { language: LANGUAGE_ID, scheme: 'file' },
      { language: LANGUAGE_ID, scheme: 'untitled' },
    ],
    outputChannel,
    traceOutputChannel: traceChannel,
    synchronize: {
      fileEvents: vscode.workspace.createFileSystemWatcher('**/*.{relay,rly}'),
    },
    initializationOptions: {
      defaultPipeline: defaultPipeline(),
      // The server then offers one "Apply pass…" code action (this extension's quick pick)
      // instead of every pass at every position.
      clientCommands: [APPLY_PASS_COMMAND],
      ...trustOptions(),
    },
  };
  const c = new LanguageClient('relay', 'Relay Language Server', serverOptions, clientOptions);
  guardCommandRegistration(c);
  return c;
}

async function startClient(): Promise<void> {
  dynamicCommands.clear();
  client = createClient();
  try {
    await client.start();
  } catch (e) {
    const s = serverSettings();
    const choice = await vscode.window.showErrorMessage(
      `Relay: could not start the language server \`${[s.command, ...s.args].join(' ')}\`: ${e instanceof Error ? e.message : String(e)}`,
      'Open Settings',
      'Show Log',
    );
    if (choice === 'Open Settings') {
      void vscode.commands.executeCommand('workbench.action.openSettings', 'relay.server');
    } else if (choice === 'Show Log') {
      outputChannel.show(true);
    }
  }
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    try {
      await c.stop(2000);
    } catch {
      // already dead
    }
  }
}

async function restartServer(): Promise<void> {
  await stopClient();
  await startClient();
  if (client?.isRunning()) {
    void vscode.window.setStatusBarMessage('Relay: language server restarted', 3000);
  }
}

function runningClient(): LanguageClient | undefined {
  if (client?.isRunning()) {
    return client;
  }
  void vscode.window
    .showErrorMessage('Relay: the language server is not running.', 'Restart Server')
    .then((choice) => choice && restartServer());
  return undefined;
}

/** The Relay document a command should work on: an explicit URI, else the active editor. */
async function targetDocument(arg?: unknown): Promise<vscode.TextDocument | undefined> {
  let uri: vscode.Uri | undefined;
  if (arg instanceof vscode.Uri) {
    uri = arg;
  } else if (typeof arg === 'string') {
    uri = vscode.Uri.parse(arg);
  }
  if (uri) {
    return vscode.workspace.openTextDocument(uri);
  }
  const editor = vscode.window.activeTextEditor;
  if (editor && editor.document.languageId === LANGUAGE_ID) {
    return editor.document;
  }
  void vscode.window.showWarningMessage('Relay: open a .relay or .rly file first.');
  return undefined;
}

/**
 * `{uri, pipeline}` as the server puts it in a code action's command, or nothing. The
 * "Apply pass…" action sends `{uri, applicable}`: the passes that change the code at the
 * cursor, listed first in the quick pick.
 */
function pipelineArg(arg: unknown): { uri?: string; pipeline?: string; applicable: string[] } {
  if (arg && typeof arg === 'object' && !(arg instanceof vscode.Uri)) {
    const o = arg as Record<string, unknown>;
    return {
      uri: typeof o.uri === 'string' ? o.uri : undefined,
      pipeline: typeof o.pipeline === 'string' ? o.pipeline : typeof o.pass === 'string' ? o.pass : undefined,
      applicable: Array.isArray(o.applicable) ? o.applicable.filter((p): p is string => typeof p === 'string') : [],
    };
  }
  return { applicable: [] };
}

async function runPipeline(document: vscode.TextDocument, pipeline: string): Promise<void> {
  const c = runningClient();
  if (!c) {
    return;
  }
  try {
    await applyPipeline(c, dynamicCommands, document.uri, pipeline);
  } catch (e) {
    void vscode.window.showErrorMessage(`Relay: ${pipeline} failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}

async function applyPassCommand(arg?: unknown): Promise<void> {
  const given = pipelineArg(arg);
  const document = await targetDocument(given.uri ?? arg);
  if (!document) {
    return;
  }
  let pass = given.pipeline;
  if (!pass) {
    const passes = await listPasses(client);
    if (passes.length === 0) {
      pass = await vscode.window.showInputBox({
        title: 'Relay: Apply Pass',
        prompt: 'No pass list available (`relay passes --json` and relay.listPasses both failed). Type a pass name.',
        placeHolder: 'FoldConstant',
      });
    } else {
      const changing = new Set(given.applicable);
      const ordered = [...passes.filter((p) => changing.has(p.name)), ...passes.filter((p) => !changing.has(p.name))];
      const pick = await vscode.window.showQuickPick(
        ordered.map((p) => ({
          label: p.name,
          description: [changing.has(p.name) ? 'changes the code here' : undefined, p.optLevel !== undefined ? `opt_level ${p.optLevel}` : undefined]
            .filter((d) => d)
            .join(' · ') || undefined,
          detail: p.description,
        })),
        { title: 'Relay: Apply Pass', placeHolder: 'Pass to run on this module', matchOnDetail: true },
      );
      pass = pick?.label;
    }
  }
  if (pass && pass.trim()) {
    await runPipeline(document, pass.trim());
  }
}

async function applyPipelineCommand(arg?: unknown): Promise<void> {
  const given = pipelineArg(arg);
  const document = await targetDocument(given.uri ?? arg);
  if (!document) {
    return;
  }
  const pipeline =
    given.pipeline ??
    (await vscode.window.showInputBox({
      title: 'Relay: Apply Pipeline',
      prompt: 'Passes to run in order, separated by commas',
      value: defaultPipeline(),
      placeHolder: 'InferType, FoldConstant',
      validateInput: (v) => (v.trim() ? undefined : 'Type at least one pass name'),
    }));
  if (pipeline && pipeline.trim()) {
    await runPipeline(document, pipeline.trim());
  }
}

async function showPassOutputCommand(provider: PassOutputProvider, arg?: unknown): Promise<void> {
  const given = pipelineArg(arg);
  const document = await targetDocument(given.uri ?? arg);
  if (!document) {
    return;
  }
  const pipeline =
    given.pipeline ??
    (await vscode.window.showInputBox({
      title: 'Relay: Show Pass Output',
      prompt: 'Pipeline to run; each pass’s output is shown as a diff against the one before',
      value: defaultPipeline(),
      placeHolder: 'InferType, FoldConstant',
      validateInput: (v) => (v.trim() ? undefined : 'Type at least one pass name'),
    }));
  if (!pipeline || !pipeline.trim()) {
    return;
  }
  const c = runningClient();
  if (!c) {
    return;
  }
  try {
    await showPassOutput(c, provider, document, pipeline.trim());
  } catch (e) {
    void vscode.window.showErrorMessage(`Relay: relay/passOutput failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  outputChannel = vscode.window.createOutputChannel('Relay Language Server');
  traceChannel = vscode.window.createOutputChannel('Relay Language Server Trace');
  const provider = new PassOutputProvider();

  context.subscriptions.push(
    outputChannel,
    traceChannel,
    provider,
    vscode.workspace.registerTextDocumentContentProvider(PASS_OUTPUT_SCHEME, provider),
    vscode.commands.registerCommand(APPLY_PASS_COMMAND, applyPassCommand),
    vscode.commands.registerCommand('relay.applyPipeline', applyPipelineCommand),
    vscode.commands.registerCommand('relay.showPassOutput', (arg?: unknown) => showPassOutputCommand(provider, arg)),
    vscode.commands.registerCommand('relay.restartServer', restartServer),
    vscode.commands.registerCommand(FIND_PATTERN_COMMAND, (pattern?: unknown) => findPattern(client, pattern)),
    vscode.commands.registerCommand(CLEAR_PATTERN_COMMAND, () => clearPatternMatches()),
    vscode.commands.registerCommand(RUN_FUNCTION_COMMAND, (arg?: unknown) => runFunction(client, outputChannel, arg)),
    vscode.commands.registerCommand(CHECK_SEMANTICS_COMMAND, (arg?: unknown) =>
      checkSemantics(client, outputChannel, defaultPipeline(), arg),
    ),
    clearOnEdit(),
    forwardTrustGrants(() => (client?.isRunning() ? client : undefined)),
    ...registerGraphViews(() => (client?.isRunning() ? client : undefined), provider),
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration('relay.server')) {
        const choice = await vscode.window.showInformationMessage(
          'Relay: the server settings changed. Restart the language server?',
          'Restart',
        );
        if (choice === 'Restart') {
          await restartServer();
        }
      }
    }),
  );

  await startClient();
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
