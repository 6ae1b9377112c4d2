import * as vscode from 'vscode';
import { LanguageClient, RequestType } from 'vscode-languageclient/node';
import { defaultPipeline } from './config';
import { PassOutputProvider, PassOutputRequest } from './passOutput';

/**
 * The graph panel and the pipeline explorer: a webview showing the dataflow graph of a
 * function (the server's `relay/graph` answer: SVG plus nodes with their ranges) with zoom,
 * pan and click-to-source; with a pipeline, the list of its stages (time, changed or not),
 * the graph of the selected stage, the graph diff of a stage against the one before (both
 * side by side, nodes added, removed and rewritten marked, the pass's summary on top), and
 * the text diff of a stage in VS Code's diff editor over the pass-output virtual documents.
 * Clicking a node (on either side of a graph diff) selects its source; moving the cursor in
 * the source highlights the node under it.
 */

interface GraphParams {
  textDocument: { uri: string };
  function?: string;
  pipeline?: string;
  stage?: number;
  diff?: boolean;
}

interface LspRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

interface GraphNode {
  id: number;
  label: string;
  range?: LspRange;
}

/** Which side of a graph diff a node is drawn on; absent for a single graph. */
type Side = 'before' | 'after';

interface GraphAnswer {
  function: string;
  functions: string[];
  svg: string;
  /** One graph's nodes, or, for a graph diff, the nodes of each side. */
  graph: { nodes?: GraphNode[]; before?: { nodes?: GraphNode[] }; after?: { nodes?: GraphNode[] } };
  stages: { pass: string; timeMs: number; changed: boolean }[];
  stage?: number;
  summary?: string;
  error?: string;
}

const GraphRequest = new RequestType<GraphParams, GraphAnswer, void>('relay/graph');

export const SHOW_GRAPH_COMMAND = 'relay.showGraph';
export const PIPELINE_EXPLORER_COMMAND = 'relay.pipelineExplorer';

/** `{uri, function, pipeline}` as the server's code lenses send them. */
function lensArg(arg: unknown): { uri?: string; function?: string; pipeline?: string } {
  if (arg && typeof arg === 'object' && !(arg instanceof vscode.Uri)) {
    const o = arg as Record<string, unknown>;
    const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
    return { uri: str(o.uri), function: str(o.function), pipeline: str(o.pipeline) };
  }
  return { uri: arg instanceof vscode.Uri ? arg.toString() : undefined };
}

function contains(r: LspRange, p: vscode.Position): boolean {
  const after = p.line > r.start.line || (p.line === r.start.line && p.character >= r.start.character);
  const before = p.line < r.end.line || (p.line === r.end.line && p.character <= r.end.character);
  return after && before;
}

function size(r: LspRange): number {
  return (r.end.line - r.start.line) * 100000 + (r.end.character - r.start.character);
}

/** One open panel: a document, a function, maybe a pipeline. */
class GraphPanel {
  private readonly panel: vscode.WebviewPanel;
  private answer: GraphAnswer | undefined;
  private stageUris: vscode.Uri[] = [];
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly client: LanguageClient,
    private readonly provider: PassOutputProvider,
    private readonly document: vscode.TextDocument,
    private functionName: string | undefined,
    private readonly pipeline: string | undefined,
  ) {
    const title = pipeline ? `Relay pipeline: ${pipeline}` : 'Relay graph';
    this.panel = vscode.window.createWebviewPanel('relayGraph', title, vscode.ViewColumn.Beside, {
      enableScripts: true,
      retainContextWhenHidden: true,
    });
    this.panel.webview.onDidReceiveMessage((m) => this.onMessage(m), undefined, this.disposables);
    vscode.window.onDidChangeTextEditorSelection((e) => this.onCursor(e), undefined, this.disposables);
    this.panel.onDidDispose(() => this.disposables.forEach((d) => d.dispose()), undefined, this.disposables);
    GraphPanel.current = this;
  }

  /** The last panel opened (for tests and commands that talk to it). */
  static current: GraphPanel | undefined;

  /** Draws the graph of `stage` (the last one by default), or its diff against the stage before. */
  async load(stage?: number, diff = false): Promise<void> {
    const params: GraphParams = { textDocument: { uri: this.document.uri.toString() } };
    if (this.functionName) params.function = this.functionName;
    if (this.pipeline) {
      params.pipeline = this.pipeline;
      if (stage !== undefined) params.stage = stage;
      if (diff) params.diff = true;
    }
    const answer = await this.client.sendRequest(GraphRequest, params);
    this.answer = answer;
    this.functionName = answer.function || this.functionName;
    if (this.pipeline && this.stageUris.length === 0 && !answer.error) {
      const output = await this.client.sendRequest(PassOutputRequest, {
        textDocument: { uri: this.document.uri.toString() },
        pipeline: this.pipeline,
      });
      this.stageUris = this.provider.addRun(this.document.uri, output.stages.map((s) => ({ label: s.pass, text: s.text })));
    }
    this.panel.webview.html = this.html(answer);
  }

  /** The nodes of the graph shown, or of one side of a graph diff. */
  private nodes(side?: Side): GraphNode[] {
    const graph = this.answer?.graph;
    return (side ? graph?.[side]?.nodes : graph?.nodes) ?? [];
  }

  private async onMessage(m: { type: string; node?: number; stage?: number; side?: Side }): Promise<void> {
    if (m.type === 'reveal' && m.node !== undefined) {
      const node = this.nodes(m.side)[m.node];
      if (!node?.range) return;
      const r = node.range;
      const range = new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
      const editor = await vscode.window.showTextDocument(this.document, { viewColumn: vscode.ViewColumn.One, preserveFocus: false });
      editor.selection = new vscode.Selection(range.start, range.end);
      editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    } else if (m.type === 'stage' && m.stage !== undefined) {
      await this.load(m.stage);
    } else if (m.type === 'graphdiff' && m.stage !== undefined) {
      await this.load(m.stage, true);
    } else if (m.type === 'diff' && m.stage !== undefined) {
      const right = this.stageUris[m.stage];
      const left = m.stage === 0 ? this.document.uri : this.stageUris[m.stage - 1];
      if (!left || !right) return;
      const pass = this.answer?.stages[m.stage]?.pass ?? `stage ${m.stage + 1}`;
      await vscode.commands.executeCommand('vscode.diff', left, right, `${pass} (stage ${m.stage + 1})`, { preview: true });
    }
  }

  /** The node under the cursor of the source editor, highlighted in the graph (in a graph
   * diff, on each side that has one). */
  private onCursor(e: vscode.TextEditorSelectionChangeEvent): void {
    if (e.textEditor.document.uri.toString() !== this.document.uri.toString()) return;
    const p = e.selections[0].active;
    const innermost = (nodes: GraphNode[]) => {
      let best: GraphNode | undefined;
      for (const n of nodes) {
        if (n.range && contains(n.range, p) && (!best || size(n.range) < size(best.range!))) best = n;
      }
      return best?.id;
    };
    const ids: string[] = [];
    if (this.answer?.graph.after) {
      for (const side of ['before', 'after'] as Side[]) {
        const id = innermost(this.nodes(side));
        if (id !== undefined) ids.push(`${side}-n${id}`);
      }
    } else {
      const id = innermost(this.nodes());
      if (id !== undefined) ids.push(`n${id}`);
    }
    void this.panel.webview.postMessage({ type: 'highlight', ids });
  }

  private html(answer: GraphAnswer): string {
    const nonce = Math.random().toString(36).slice(2);
    const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
    const stages = (answer.stages ?? [])
      .map(
        (s, i) =>
          `<li class="${i === answer.stage ? 'selected' : ''}" data-stage="${i}"><a class="stage" data-stage="${i}">${i + 1}. ${esc(s.pass)}</a>` +
          ` <span class="time">${s.timeMs.toFixed(2)} ms</span> <span class="${s.changed ? 'changed' : 'unchanged'}">${s.changed ? 'changed' : 'unchanged'}</span>` +
          ` <a class="diff" data-stage="${i}" title="Text diff against the stage before">diff</a>` +
          ` <a class="graphdiff" data-stage="${i}" title="Graph against the stage before, changes marked">graph diff</a></li>`,
      )
      .join('');
    const side = this.pipeline
      ? `<div id="stages"><h3>${esc(this.pipeline)}</h3><ol>${stages}</ol></div>`
      : '';
    const body = answer.error ? `<p class="error">${esc(answer.error)}</p>` : answer.svg;
    return `<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}';">
<style>body{margin:0;display:flex;height:100vh;font-family:sans-serif;color:var(--vscode-foreground)}
#stages{width:260px;overflow:auto;padding:8px;border-right:1px solid #8884}#stages ol{padding-left:0;list-style:none}
#stages li{padding:3px;cursor:pointer}#stages li.selected{background:#1a73e833}.changed{color:#e37400}.unchanged{color:#888}
.time{color:#888;font-size:90%}a{cursor:pointer;text-decoration:underline}
#graph{flex:1;overflow:hidden;background:#fff}#graph svg{width:100%;height:100%}.node{cursor:pointer}.error{color:#d93025;padding:8px}</style>
</head><body>${side}<div id="graph" data-function="${esc(answer.function ?? '')}" data-view="${answer.graph?.after ? 'diff' : 'graph'}">${body}</div>
<script nonce="${nonce}">
const vscode = acquireVsCodeApi();
const svg = document.querySelector('#graph svg');
if (svg) {
  svg.removeAttribute('width'); svg.removeAttribute('height');
  const view = svg.viewBox.baseVal;
  const point = (e) => { const r = svg.getBoundingClientRect();
    return { x: view.x + (e.clientX - r.left) / r.width * view.width, y: view.y + (e.clientY - r.top) / r.height * view.height }; };
  svg.addEventListener('wheel', (e) => { e.preventDefault(); const p = point(e); const k = e.deltaY > 0 ? 1.2 : 1 / 1.2;
    view.x = p.x - (p.x - view.x) * k; view.y = p.y - (p.y - view.y) * k; view.width *= k; view.height *= k; }, { passive: false });
  let drag = null, moved = false;
  svg.addEventListener('mousedown', (e) => { drag = point(e); moved = false; });
  window.addEventListener('mouseup', () => { drag = null; });
  svg.addEventListener('mousemove', (e) => { if (!drag) return; const p = point(e); moved = true;
    view.x -= p.x - drag.x; view.y -= p.y - drag.y; });
  svg.querySelectorAll('.node').forEach((n) => n.addEventListener('click', () => {
    if (moved) return;
    // In a graph diff the panels are "before" and "after", in that order.
    const panels = [...svg.querySelectorAll('g.panel')];
    const side = panels.length > 1 ? (panels.indexOf(n.closest('g.panel')) === 0 ? 'before' : 'after') : undefined;
    vscode.postMessage({ type: 'reveal', node: Number(n.dataset.node), side });
  }));
}
document.querySelectorAll('a.stage').forEach((a) => a.addEventListener('click', () =>
  vscode.postMessage({ type: 'stage', stage: Number(a.dataset.stage) })));
document.querySelectorAll('a.diff').forEach((a) => a.addEventListener('click', () =>
  vscode.postMessage({ type: 'diff', stage: Number(a.dataset.stage) })));
document.querySelectorAll('a.graphdiff').forEach((a) => a.addEventListener('click', () =>
  vscode.postMessage({ type: 'graphdiff', stage: Number(a.dataset.stage) })));
window.addEventListener('message', (e) => {
  const m = e.data;
  if (m.type !== 'highlight') return;
  document.querySelectorAll('.node.highlight').forEach((n) => n.classList.remove('highlight'));
  for (const id of m.ids ?? []) {
    const n = document.getElementById(id);
    if (n) n.classList.add('highlight');
  }
});
</script></body></html>`;
  }
}

async function open(
  getClient: () => LanguageClient | undefined,
  provider: PassOutputProvider,
  arg: unknown,
  withPipeline: boolean,
): Promise<void> {
  const given = lensArg(arg);
  const document = given.uri
    ? await vscode.workspace.openTextDocument(vscode.Uri.parse(given.uri))
    : vscode.window.activeTextEditor?.document;
  const client = getClient();
  if (!document || !client) {
    void vscode.window.showWarningMessage('Relay: open a .relay file with the language server running first.');
    return;
  }
  let pipeline = withPipeline ? given.pipeline : undefined;
  if (withPipeline && !pipeline) {
    pipeline = await vscode.window.showInputBox({ title: 'Relay: Pipeline Explorer', value: defaultPipeline() });
    if (!pipeline?.trim()) return;
  }
  const panel = new GraphPanel(client, provider, document, given.function, pipeline?.trim());
  try {
    await panel.load();
  } catch (e) {
    void vscode.window.showErrorMessage(`Relay: relay/graph failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The commands of the graph views (also the targets of the server's code lenses). */
export function registerGraphViews(
  getClient: () => LanguageClient | undefined,
  provider: PassOutputProvider,
): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand(SHOW_GRAPH_COMMAND, (arg?: unknown) => open(getClient, provider, arg, false)),
    vscode.commands.registerCommand(PIPELINE_EXPLORER_COMMAND, (arg?: unknown) => open(getClient, provider, arg, true)),
  ];
}
