import * as vscode from 'vscode';
import { ExecuteCommandRequest, LanguageClient, Range as LspRange } from 'vscode-languageclient/node';

/** The server command (workspace/executeCommand) and this extension's command of the same id. */
export const FIND_PATTERN_COMMAND = 'relay.findPattern';
export const CLEAR_PATTERN_COMMAND = 'relay.clearPatternMatches';

/** One match as the server answers it. */
interface PatternMatch {
  function: string;
  range: LspRange;
  parts: LspRange[];
}

/** The two highlights, made on first use (not when the bundle loads). */
let decorations: { match: vscode.TextEditorDecorationType; part: vscode.TextEditorDecorationType } | undefined;

function decorationTypes() {
  decorations ??= {
    match: vscode.window.createTextEditorDecorationType({
      backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
      borderColor: new vscode.ThemeColor('editor.findMatchBorder'),
      borderStyle: 'solid',
      borderWidth: '1px',
      overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.findMatchForeground'),
      overviewRulerLane: vscode.OverviewRulerLane.Center,
    }),
    part: vscode.window.createTextEditorDecorationType({
      backgroundColor: new vscode.ThemeColor('editor.findRangeHighlightBackground'),
    }),
  };
  return decorations;
}

let lastPattern = '';

export function clearPatternMatches(editor = vscode.window.activeTextEditor): void {
  if (decorations) {
    editor?.setDecorations(decorations.match, []);
    editor?.setDecorations(decorations.part, []);
  }
}

/**
 * "Relay: Find Pattern…": prompts for a dataflow pattern (docs/patterns.md), asks the server
 * for its matches in the active document, highlights them and lists them in a quick pick that
 * moves to the match picked. Returns the matches (for tests), or undefined when cancelled.
 */
export async function findPattern(
  client: LanguageClient | undefined,
  patternArg?: unknown,
): Promise<PatternMatch[] | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== 'relay') {
    void vscode.window.showErrorMessage('Relay: Find Pattern works on an open .relay file.');
    return undefined;
  }
  if (!client?.isRunning()) {
    void vscode.window.showErrorMessage('Relay: the language server is not running.');
    return undefined;
  }
  const pattern =
    typeof patternArg === 'string'
      ? patternArg
      : await vscode.window.showInputBox({
          prompt: 'Dataflow pattern (see docs/patterns.md)',
          placeHolder: 'nn.conv2d(*, *) |> nn.bias_add(_, *) |> nn.relu(_)',
          value: lastPattern,
        });
  if (!pattern || pattern.trim() === '') {
    return undefined;
  }
  lastPattern = pattern;
  let result: { matches?: PatternMatch[] } | undefined;
  try {
    result = await client.sendRequest(ExecuteCommandRequest.type, {
      command: FIND_PATTERN_COMMAND,
      arguments: [{ uri: editor.document.uri.toString(), pattern }],
    });
  } catch (e) {
    // The server's message shows the pattern with carets under the problem.
    const message = e instanceof Error ? e.message : String(e);
    void vscode.window.showErrorMessage(`Relay: ${message}`, { modal: false });
    return undefined;
  }
  const matches = result?.matches ?? [];
  const asRange = (r: LspRange) => client.protocol2CodeConverter.asRange(r);
  const { match, part } = decorationTypes();
  editor.setDecorations(match, matches.map((m) => asRange(m.range)));
  editor.setDecorations(part, matches.flatMap((m) => m.parts.map(asRange)));
  if (matches.length === 0) {
    void vscode.window.showInformationMessage(`Relay: no match for ${pattern}`);
    return matches;
  }
  if (typeof patternArg !== 'string') {
    const items = matches.map((m) => {
      const range = asRange(m.range);
      return {
        label: editor.document.getText(range).split('\n')[0],
        description: `@${m.function}, line ${range.start.line + 1}`,
        range,
      };
    });
    const picked = await vscode.window.showQuickPick(items, {
      title: `${matches.length} match${matches.length === 1 ? '' : 'es'} of ${pattern}`,
    });
    if (picked) {
      editor.selection = new vscode.Selection(picked.range.start, picked.range.end);
      editor.revealRange(picked.range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }
  }
  return matches;
}

/** Drops the highlights when the document they were computed for changes. */
export function clearOnEdit(): vscode.Disposable {
  return vscode.workspace.onDidChangeTextDocument((e) => {
    for (const editor of vscode.window.visibleTextEditors) {
      if (editor.document === e.document && e.contentChanges.length > 0) {
        clearPatternMatches(editor);
      }
    }
  });
}
