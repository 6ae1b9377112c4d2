// End-to-end test of the built extension (.vsix) in a real VS Code: code-server (VS Code in
// the browser) with the extension installed, driven headless through Debian's chromium with
// puppeteer-core, against the real `relay` binary. Started by run.sh, which installs what it
// needs; see run.sh for the environment.
//
//   node e2e.mjs --code-server ENTRY.js --vsix relay.vsix --relay /path/to/relay --artifacts DIR
//
// A scenario is a workspace (files, settings), code-server options and a list of steps; each
// scenario gets its own code-server and browser page. Every step is one test: it prints
// "ok   NAME" or "FAIL NAME" and leaves a screenshot NN-NAME.png in the artifacts directory.
// After a failed step the rest of its scenario cannot run and counts as failed. The last line
// is "vscode-e2e: N passed, M failed".
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import puppeteer from 'puppeteer-core';

const { values: opts } = parseArgs({
  options: {
    'code-server': { type: 'string' },
    vsix: { type: 'string' },
    relay: { type: 'string' },
    artifacts: { type: 'string' },
    browser: { type: 'string', default: process.env.RELAY_E2E_BROWSER || '/usr/bin/chromium' },
    only: { type: 'string' },
  },
});
for (const key of ['code-server', 'vsix', 'relay', 'artifacts']) {
  if (!opts[key]) {
    console.error(`e2e.mjs: --${key} is required`);
    process.exit(2);
  }
}
const RELAY = path.resolve(opts.relay);
const STEP_TIMEOUT_MS = Number(process.env.RELAY_E2E_TIMEOUT_MS || 60_000);
fs.mkdirSync(opts.artifacts, { recursive: true });

// Test inputs -------------------------------------------------------------------------------

// `add(1f, 2f)` is constant: FoldConstant turns it into `3f`.
const FOLD_SRC = `#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  %0 = add(1f, 2f);
  multiply(%x, %0)
}
`;

// (2, 2) and (3) do not broadcast: a type error.
const TYPE_ERROR_SRC = `#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2), float32], %y: Tensor[(3), float32]) {
  add(%x, %y)
}
`;

// A relay.toml whose on-save pipeline runs an external pass: a shell command that leaves a
// marker file in the project (and passes the module through unchanged). Opening a folder
// must not run it until the user trusts the folder.
const TRUST_COMMAND = 'sh -c touch ran-marker; cat';
const TRUST_TOML = `on_save = ["mark"]

[pipelines]
mark = "Mark"

[passes.Mark]
command = ["sh", "-c", "touch ran-marker; cat"]
`;

// A module and a deliberately wrong external pass (every `add` becomes `subtract`, sed on the
// text): the semantic check must name AddToSubtract, a correct pipeline must agree.
const RUN_SRC = `#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %0 = add(%x, 1f);
  nn.relu(%0)
}
`;
const WRONG_PASS_TOML = `[passes.AddToSubtract]
command = ["sed", "-e", "s/add(/subtract(/"]
required = ["InferType"]
`;

/** The texts of the code lenses of the active editor, joined. */
async function lensTexts(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('.part.editor .codelens-decoration')].map((e) => e.innerText).join(' | '),
  );
}

// Helpers -----------------------------------------------------------------------------------

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` (async, returns a truthy value when done) until it succeeds or time runs out. */
async function until(what, probe, timeout = STEP_TIMEOUT_MS) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      last = await probe();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(200);
  }
  throw new Error(`timed out after ${timeout} ms waiting for ${what}${last instanceof Error ? ` (${last.message})` : ''}`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The process table: pid, parent pid, command line. */
function processes() {
  const out = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((line) => line.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/))
    .filter(Boolean)
    .map(([, pid, ppid, args]) => ({ pid: Number(pid), ppid: Number(ppid), args }));
}

function isDescendant(table, pid, ancestor) {
  const parent = new Map(table.map((p) => [p.pid, p.ppid]));
  for (let p = pid; p && p !== 1; p = parent.get(p)) {
    if (p === ancestor) return true;
  }
  return false;
}

/** Text of the visible lines of the active text editor (Monaco renders spaces as U+00A0). */
async function editorText(page) {
  return page.evaluate(() => {
    const lines = document.querySelector('.part.editor .editor-group-container.active .monaco-editor .view-lines');
    return lines ? lines.innerText.replace(/\u00a0/g, ' ') : '';
  });
}

async function quickInputVisible(page) {
  return page.evaluate(() => {
    const w = document.querySelector('.quick-input-widget');
    return !!w && w.style.display !== 'none' && w.offsetParent !== null;
  });
}

/**
 * Types into the quick input (command palette, quick open, quick pick) and picks the first row,
 * which must match `rowMatches`. `beforeEnter` runs with the list shown (e.g. a screenshot).
 */
async function pickInQuickInput(page, text, rowMatches, beforeEnter) {
  await until('the quick input', () => quickInputVisible(page));
  await page.keyboard.type(text, { delay: 10 });
  await until(`a quick input row for "${text}"`, () =>
    page.evaluate((source) => {
      const re = new RegExp(source);
      const rows = [...document.querySelectorAll('.quick-input-widget .monaco-list-row')];
      return rows.length > 0 && re.test(rows[0].getAttribute('aria-label') || rows[0].innerText);
    }, rowMatches.source),
  );
  if (beforeEnter) await beforeEnter();
  await page.keyboard.press('Enter');
}

/** Runs a command from the command palette by its title. */
async function runCommand(page, title) {
  await page.keyboard.press('F1');
  await pickInQuickInput(page, title, new RegExp(title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
}

/** Opens a workspace file with Quick Open (Ctrl+P) and waits for its editor. */
async function openFile(page, name) {
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyP');
  await page.keyboard.up('Control');
  await pickInQuickInput(page, name, new RegExp(name.replace(/\./g, '\\.')));
  await until(`the editor of ${name}`, () =>
    page.evaluate(
      (n) => {
        const tab = document.querySelector('.part.editor .tab.active');
        return !!tab && (tab.getAttribute('aria-label') || '').startsWith(n);
      },
      name,
    ),
  );
}

/** Moves the cursor with Go to Line (Ctrl+G) to LINE:COLUMN (1-based). */
async function goTo(page, line, column) {
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyG');
  await page.keyboard.up('Control');
  await until('the Go to Line input', () => quickInputVisible(page));
  await page.keyboard.type(`${line}:${column}`, { delay: 10 });
  await page.keyboard.press('Enter');
  await until('the quick input to close', async () => !(await quickInputVisible(page)));
}

/** Adds a blank line at the end of the active editor and saves it (Ctrl+S), waiting until saved. */
async function editAndSave(page) {
  await page.keyboard.down('Control');
  await page.keyboard.press('End');
  await page.keyboard.up('Control');
  await page.keyboard.press('Enter');
  await until('the editor to be dirty', () => page.$('.part.editor .tab.active.dirty'));
  await page.keyboard.down('Control');
  await page.keyboard.press('KeyS');
  await page.keyboard.up('Control');
  await until('the editor to be saved', async () => !(await page.$('.part.editor .tab.active.dirty')));
}

/** The texts of the notification toasts on screen. */
async function notificationTexts(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll('.notifications-toasts .notification-list-item-message')].map((e) => e.innerText),
  );
}

// Scenarios ---------------------------------------------------------------------------------

/**
 * The steps of a scenario get `ctx`: {page, workspace, codeServer (its ChildProcess), log(line),
 * screenshot(what) for one more screenshot within a step} and may keep state in `ctx.state`.
 * Another scenario is one more entry: its own files (paths may name subfolders), settings,
 * code-server arguments and steps.
 */
const scenarios = [
  {
    name: 'basic',
    files: {
      'fold.relay': FOLD_SRC,
      'type_error.relay': TYPE_ERROR_SRC,
      'project/relay.toml': TRUST_TOML,
      'project/model.relay': FOLD_SRC,
    },
    // Workspace settings: the relay binary under test, as a user would configure it.
    settings: { 'relay.server.path': RELAY },
    userSettings: { 'files.autoSave': 'off' },
    codeServerArgs: ['--disable-workspace-trust'],
    steps: [
      {
        name: 'the extension starts the server as `relay lsp --stdio`',
        async run(ctx) {
          await openFile(ctx.page, 'fold.relay');
          const wanted = `${RELAY} lsp --stdio`;
          const server = await until(`a process \`${wanted}\``, () => {
            const table = processes();
            return table.find((p) => p.args === wanted && isDescendant(table, p.pid, ctx.codeServer.pid));
          });
          ctx.log(`server process ${server.pid}: ${server.args}`);
          // The extension's output channel shows the server's greeting.
          await runCommand(ctx.page, 'Output: Show Output Channels');
          await pickInQuickInput(ctx.page, 'Relay Language Server', /^Relay Language Server(?! Trace)/);
          await until('"relay language server started" in the Relay Language Server output', () =>
            ctx.page.evaluate(() =>
              [...document.querySelectorAll('.part.panel .monaco-editor .view-lines')].some((e) =>
                e.innerText.replace(/\u00a0/g, ' ').includes('relay language server started'),
              ),
            ),
          );
        },
      },
      {
        name: 'a type error appears in the Problems panel',
        async run(ctx) {
          await openFile(ctx.page, 'type_error.relay');
          await runCommand(ctx.page, 'Problems: Focus on Problems View');
          const row = await until('the type error in the Problems panel', () =>
            ctx.page.evaluate(() => {
              const rows = [...document.querySelectorAll('.markers-panel .monaco-list-row')];
              const hit = rows.find((r) => /Incompatible broadcast type/.test(r.innerText));
              return hit ? hit.innerText.replace(/\s+/g, ' ') : null;
            }),
          );
          ctx.log(`problem: ${row}`);
        },
      },
      {
        name: 'hover shows Tensor[(…), float32]',
        async run(ctx) {
          await openFile(ctx.page, 'fold.relay');
          // `%x` in `multiply(%x, %0)`.
          await goTo(ctx.page, 4, 13);
          await runCommand(ctx.page, 'Show or Focus Hover');
          const text = await until('a hover with a tensor type', () =>
            ctx.page.evaluate(() => {
              const hovers = [...document.querySelectorAll('.monaco-hover')].filter((h) => h.offsetParent !== null);
              const hit = hovers.find((h) => /Tensor\[\(.*\), float32\]/.test(h.innerText));
              return hit ? hit.innerText : null;
            }),
          );
          ctx.log(`hover: ${text.replace(/\s+/g, ' ').slice(0, 120)}`);
          await ctx.page.keyboard.press('Escape');
        },
      },
      {
        name: 'code actions at the cursor: a few passes and "Apply pass…"',
        async run(ctx) {
          // On `add` of `add(1f, 2f)`.
          await goTo(ctx.page, 3, 8);
          await ctx.page.keyboard.down('Control');
          await ctx.page.keyboard.press('Period');
          await ctx.page.keyboard.up('Control');
          const titles = await until('the code action menu', () =>
            ctx.page.evaluate(() => {
              const rows = [...document.querySelectorAll('.action-widget .monaco-list-row.action')];
              return rows.length > 0 ? rows.map((r) => r.getAttribute('aria-label') || r.innerText) : null;
            }),
          );
          ctx.log(`code actions: ${titles.join(' | ')}`);
          ctx.state.codeActions = titles;
          if (!titles.includes('Apply FoldConstant')) throw new Error('no "Apply FoldConstant" action');
          if (!titles.includes('Apply pass…')) throw new Error('no "Apply pass…" action');
          if (titles.length > 12) throw new Error(`${titles.length} code actions offered`);
        },
      },
      {
        name: '"Apply pass…" → FoldConstant rewrites the document',
        async run(ctx) {
          // Pick "Apply pass…" in the open code action menu.
          const index = ctx.state.codeActions.indexOf('Apply pass…');
          for (let i = 0; i < index; i++) await ctx.page.keyboard.press('ArrowDown');
          await ctx.page.keyboard.press('Enter');
          // The extension's quick pick: FoldConstant changes this code, so it comes first.
          await pickInQuickInput(ctx.page, 'FoldConstant', /^FoldConstant/, () => ctx.screenshot('the pass quick pick'));
          const text = await until('the folded document', async () => {
            const t = await editorText(ctx.page);
            return !t.includes('add(1f, 2f)') && t.includes('3f') && t.includes('multiply(') ? t : null;
          });
          ctx.log(`after FoldConstant: ${text.replace(/\s+/g, ' ')}`);
        },
      },
    ],
  },
  {
    // The graph views: code lenses, the pipeline explorer (a webview), click-to-source and
    // the cursor highlighting its node.
    name: 'graph',
    files: { 'graph.relay': FOLD_SRC },
    settings: { 'relay.server.path': RELAY, 'relay.defaultPipeline': 'InferType, FoldConstant' },
    userSettings: { 'files.autoSave': 'off' },
    codeServerArgs: ['--disable-workspace-trust'],
    steps: [
      {
        name: 'code lenses above @main: Graph, Run pipeline, the size',
        async run(ctx) {
          await openFile(ctx.page, 'graph.relay');
          const lenses = await until('the code lenses', () =>
            ctx.page.evaluate(() => {
              const t = [...document.querySelectorAll('.part.editor .codelens-decoration')].map((e) => e.innerText).join(' | ');
              return t.includes('Graph') && t.includes('2 calls') ? t : null;
            }),
          );
          ctx.log(`lenses: ${lenses.replace(/\s+/g, ' ')}`);
          if (!lenses.includes('Run pipeline ▸ InferType, FoldConstant')) throw new Error(`no pipeline lens: ${lenses}`);
        },
      },
      {
        name: 'the pipeline explorer lists the stages and draws the graph',
        async run(ctx) {
          await runCommand(ctx.page, 'Relay: Pipeline Explorer…');
          await until('the pipeline input', () => quickInputVisible(ctx.page));
          await ctx.page.keyboard.press('Enter'); // the default pipeline, prefilled
          ctx.state.frame = await until('the explorer webview', async () => {
            for (const f of ctx.page.frames()) {
              try {
                if (await f.$('#graph svg')) return f;
              } catch {
                // a frame being replaced
              }
            }
            return null;
          });
          const stages = await ctx.state.frame.$$eval('#stages li', (lis) => lis.map((l) => l.innerText.replace(/\s+/g, ' ')));
          ctx.log(`stages: ${stages.join(' | ')}`);
          if (stages.length !== 2 || !/FoldConstant.*changed/.test(stages[1])) throw new Error(`stages: ${stages}`);
          // The pipeline's lens now says what the run did.
          const lens = await until('the lens with the run summary', () =>
            ctx.page.evaluate(() => {
              const t = [...document.querySelectorAll('.part.editor .codelens-decoration')].map((e) => e.innerText).join(' | ');
              return /Run pipeline ▸ InferType, FoldConstant: 1 call removed/.test(t) ? t : null;
            }),
          );
          ctx.log(`lenses after the run: ${lens.replace(/\s+/g, ' ')}`);
        },
      },
      {
        name: 'selecting stage 1 draws its graph',
        async run(ctx) {
          await ctx.state.frame.click('a.stage[data-stage="0"]');
          ctx.state.frame = await until('the graph of stage 1', async () => {
            for (const f of ctx.page.frames()) {
              try {
                if (await f.$('#stages li.selected[data-stage="0"]')) return f;
              } catch {
                // a frame being replaced
              }
            }
            return null;
          });
          const labels = await ctx.state.frame.$$eval('.node tspan', (ts) => ts.map((t) => t.textContent));
          if (!labels.includes('add') || !labels.includes('multiply')) throw new Error(`nodes: ${labels}`);
        },
      },
      {
        name: 'clicking a node selects its source in the editor',
        async run(ctx) {
          const node = await ctx.state.frame.evaluateHandle(() =>
            [...document.querySelectorAll('.node')].find((n) => n.querySelector('tspan')?.textContent === 'multiply'),
          );
          await node.asElement().click();
          const status = await until('the selection of multiply(%x, %0)', () =>
            ctx.page.evaluate(() => {
              const items = [...document.querySelectorAll('.statusbar-item')].map((e) => e.innerText);
              return items.find((t) => /Ln 4, Col \d+ \(16 selected\)/.test(t)) ?? null;
            }),
          );
          ctx.log(`status bar: ${status}`);
        },
      },
      {
        name: 'moving the cursor highlights its node',
        async run(ctx) {
          await goTo(ctx.page, 3, 9);
          // The click before left `multiply` highlighted: wait for the cursor's node.
          let last = 'nothing';
          await until('`add` highlighted', async () => {
            for (const f of ctx.page.frames()) {
              try {
                last = await f.$eval('.node.highlight tspan', (t) => t.textContent);
                if (last === 'add') return last;
              } catch {
                // no highlight in this frame (yet)
              }
            }
            return null;
          }).catch((e) => {
            throw new Error(`${e.message} (highlighted: ${last})`);
          });
        },
      },
      {
        name: 'the graph diff of FoldConstant marks the folded call, and its nodes lead to the source',
        async run(ctx) {
          await ctx.state.frame.click('a.graphdiff[data-stage="1"]');
          ctx.state.frame = await until('the graph diff of stage 2', async () => {
            for (const f of ctx.page.frames()) {
              try {
                if (await f.$('#graph[data-view="diff"] svg')) return f;
              } catch {
                // a frame being replaced
              }
            }
            return null;
          });
          const removed = await ctx.state.frame.$$eval('.node.removed tspan', (ts) => ts.map((t) => t.textContent));
          const summary = await ctx.state.frame.$eval('text.summary', (t) => t.textContent);
          ctx.log(`removed: ${removed.join(', ')}; summary: ${summary}`);
          if (!removed.includes('add')) throw new Error(`removed nodes: ${removed}`);
          if (!/^FoldConstant/.test(summary)) throw new Error(`summary: ${summary}`);
          // `multiply` on the "after" side still leads to its source (line 4; the cursor is on
          // line 3 since the step before).
          const node = await ctx.state.frame.evaluateHandle(() =>
            [...[...document.querySelectorAll('g.panel')][1].querySelectorAll('.node')].find(
              (n) => n.querySelector('tspan')?.textContent === 'multiply',
            ),
          );
          await node.asElement().click();
          const status = await until('the selection of multiply(%x, %0) from the diff', () =>
            ctx.page.evaluate(() => {
              const items = [...document.querySelectorAll('.statusbar-item')].map((e) => e.innerText);
              return items.find((t) => /Ln 4, Col \d+ \(16 selected\)/.test(t)) ?? null;
            }),
          );
          ctx.log(`status bar: ${status}`);
        },
      },
    ],
  },
  {
    // Running the program: the "Run with random inputs" lens and "Check Pass Semantics…".
    name: 'run',
    files: { 'run/relay.toml': WRONG_PASS_TOML, 'run/model.relay': RUN_SRC },
    settings: { 'relay.server.path': RELAY, 'relay.defaultPipeline': 'FoldConstant, AddToSubtract' },
    userSettings: { 'files.autoSave': 'off' },
    codeServerArgs: ['--disable-workspace-trust'],
    steps: [
      {
        name: 'the "Run with random inputs" lens shows the shape, dtype and min/max/mean',
        async run(ctx) {
          await openFile(ctx.page, 'model.relay');
          await until('the run lens', async () => (await lensTexts(ctx.page)).includes('Run with random inputs'));
          const lens = await ctx.page.evaluateHandle(() =>
            [...document.querySelectorAll('.part.editor .codelens-decoration a')].find((a) =>
              a.innerText.includes('Run with random inputs'),
            ),
          );
          await lens.asElement().click();
          const told = await until('a notification with the summary', async () =>
            (await notificationTexts(ctx.page)).find((t) => t.includes('@main (seed 0): (2, 3) float32 min')),
          );
          ctx.log(`notification: ${told}`);
          const lenses = await until('the lens with the result', async () => {
            const t = await lensTexts(ctx.page);
            return /Random inputs: \(2, 3\) float32 min [-\d.e]+ max [-\d.e]+ mean [-\d.e]+ · seed 0/.test(t) ? t : null;
          });
          ctx.log(`lenses: ${lenses.replace(/\s+/g, ' ')}`);
          await ctx.screenshot('the run lens after the run');
        },
      },
      {
        name: '"Check Pass Semantics…" names the wrong pass, with a diagnostic and a reproducer',
        async run(ctx) {
          await runCommand(ctx.page, 'Relay: Check Pass Semantics…');
          await until('the pipeline input', () => quickInputVisible(ctx.page));
          await ctx.page.keyboard.press('Enter'); // the default pipeline, prefilled
          const told = await until('a notification naming AddToSubtract', async () =>
            (await notificationTexts(ctx.page)).find((t) => t.includes('pass AddToSubtract changed the result')),
          );
          ctx.log(`notification: ${told}`);
          if (!/seed 0/.test(told) || !/output\[\d+, \d+\] was .*, is now/.test(told)) throw new Error(`report: ${told}`);
          await runCommand(ctx.page, 'Problems: Focus on Problems View');
          const row = await until('the semantic check in the Problems panel', () =>
            ctx.page.evaluate(() => {
              const rows = [...document.querySelectorAll('.markers-panel .monaco-list-row')];
              const hit = rows.find((r) => /semantic check: pass AddToSubtract/.test(r.innerText));
              return hit ? hit.innerText.replace(/\s+/g, ' ') : null;
            }),
          );
          ctx.log(`problem: ${row.slice(0, 160)}`);
          const before = path.join(ctx.workspace, 'run', 'relay-check-semantics', 'before.relay');
          if (!fs.existsSync(before)) throw new Error(`no reproducer at ${before}`);
        },
      },
      {
        name: 'a correct pipeline agrees',
        async run(ctx) {
          await openFile(ctx.page, 'model.relay');
          await runCommand(ctx.page, 'Relay: Check Pass Semantics…');
          await until('the pipeline input', () => quickInputVisible(ctx.page));
          await ctx.page.keyboard.type('FoldConstant, ToANormalForm', { delay: 10 });
          await ctx.page.keyboard.press('Enter');
          const told = await until('a notification saying the results agree', async () =>
            (await notificationTexts(ctx.page)).find(
              (t) => t.includes('FoldConstant, ToANormalForm: the results agree (') && !t.includes('(0 passes'),
            ),
          );
          ctx.log(`notification: ${told}`);
        },
      },
    ],
  },
  {
    // Workspace Trust: relay.toml's external commands run only in a trusted folder.
    name: 'trust',
    files: { 'project/relay.toml': TRUST_TOML, 'project/model.relay': FOLD_SRC },
    settings: {},
    // Workspace Trust on (as in VS Code), without the modal question at startup: the folder is
    // not trusted, so it opens in Restricted Mode. relay.server.path is a restricted setting,
    // which VS Code ignores in the workspace's settings there: a user setting, as a user would.
    userSettings: {
      'security.workspace.trust.enabled': true,
      'security.workspace.trust.startupPrompt': 'never',
      // Saved only by the steps' Ctrl+S, so each save is one the test made.
      'files.autoSave': 'off',
      'relay.server.path': RELAY,
    },
    steps: [
      {
        name: 'an untrusted folder opens in Restricted Mode and the server starts',
        async run(ctx) {
          await until('the Restricted Mode indicator', () =>
            ctx.page.evaluate(() => /Restricted Mode/.test(document.querySelector('.part.statusbar')?.innerText || '')),
          );
          await openFile(ctx.page, 'model.relay');
          const wanted = `${RELAY} lsp --stdio`;
          await until(`a process \`${wanted}\``, () => {
            const table = processes();
            return table.find((p) => p.args === wanted && isDescendant(table, p.pid, ctx.codeServer.pid));
          });
        },
      },
      {
        name: 'saving in the untrusted folder does not run the relay.toml command and says so',
        async run(ctx) {
          await editAndSave(ctx.page);
          const told = await until('a notification naming the skipped command', async () =>
            (await notificationTexts(ctx.page)).find((t) => t.includes('not trusted') && t.includes(TRUST_COMMAND)),
          );
          ctx.log(`notification: ${told}`);
          // The server tells the user after deciding not to run the pipeline's command.
          if (fs.existsSync(path.join(ctx.workspace, 'project', 'ran-marker'))) {
            throw new Error('the external command ran in an untrusted folder');
          }
        },
      },
      {
        name: 'after "Trust" in Manage Workspace Trust, saving runs the command',
        async run(ctx) {
          await runCommand(ctx.page, 'Workspaces: Manage Workspace Trust');
          const button = await until('the Trust button', () =>
            ctx.page.evaluateHandle(() =>
              [...document.querySelectorAll('.workspace-trust-editor .monaco-button')].find(
                (b) => b.offsetParent !== null && /^Trust( Folder)?$/.test(b.innerText.trim()),
              ) || null,
            ).then((h) => (h.asElement() ? h : null)),
          );
          await ctx.screenshot('Manage Workspace Trust');
          await button.click();
          await until('Restricted Mode to end', () =>
            ctx.page.evaluate(() => !/Restricted Mode/.test(document.querySelector('.part.statusbar')?.innerText || '')),
          );
          await openFile(ctx.page, 'model.relay');
          await editAndSave(ctx.page);
          await until('the on-save pipeline to run the command (project/ran-marker)', () =>
            fs.existsSync(path.join(ctx.workspace, 'project', 'ran-marker')),
          );
        },
      },
    ],
  },
];

// Running -----------------------------------------------------------------------------------

let passed = 0;
let failed = 0;
let shot = 0;

function out(line) {
  process.stdout.write(`${line}\n`);
}

async function screenshot(page, name) {
  shot += 1;
  const file = path.join(
    opts.artifacts,
    `${String(shot).padStart(2, '0')}-${name.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60)}.png`,
  );
  try {
    await page.screenshot({ path: file });
  } catch (e) {
    out(`       (no screenshot: ${e.message})`);
  }
}

async function startCodeServer(scenario, root) {
  const userData = path.join(root, 'user-data');
  const extensions = path.join(root, 'extensions');
  const workspace = path.join(root, 'workspace');
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.mkdirSync(path.join(workspace, '.vscode'), { recursive: true });
  for (const [name, text] of Object.entries(scenario.files)) {
    fs.mkdirSync(path.dirname(path.join(workspace, name)), { recursive: true });
    fs.writeFileSync(path.join(workspace, name), text);
  }
  fs.writeFileSync(path.join(workspace, '.vscode', 'settings.json'), JSON.stringify(scenario.settings, null, 2));
  // User settings: no welcome page, tips, update checks or telemetry in the way.
  fs.writeFileSync(
    path.join(userData, 'User', 'settings.json'),
    JSON.stringify(
      {
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'workbench.enableExperiments': false,
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'telemetry.telemetryLevel': 'off',
        'editor.hover.delay': 100,
        ...(scenario.userSettings || {}),
      },
      null,
      2,
    ),
  );
  const entry = opts['code-server'];
  const common = ['--user-data-dir', userData, '--extensions-dir', extensions];
  const install = execFileSync('node', [entry, ...common, '--install-extension', path.resolve(opts.vsix)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (!/successfully installed/i.test(install)) {
    throw new Error(`installing ${opts.vsix} failed:\n${install}`);
  }
  const port = await freePort();
  const logFile = path.join(opts.artifacts, `code-server-${scenario.name}.log`);
  const logFd = fs.openSync(logFile, 'w');
  const child = spawn(
    'node',
    [
      entry,
      ...common,
      '--auth', 'none',
      '--bind-addr', `127.0.0.1:${port}`,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-getting-started-override',
      ...(scenario.codeServerArgs || []),
      workspace,
    ],
    { stdio: ['ignore', logFd, logFd], detached: true },
  );
  await until('code-server to listen', async () => /HTTP server listening/.test(fs.readFileSync(logFile, 'utf8')), 60_000);
  return { child, port, workspace, logFile };
}

function stopProcessGroup(child) {
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

async function runScenario(scenario, browser) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `relay-vscode-e2e-${scenario.name}-`));
  let server;
  let page;
  const t0 = Date.now();
  try {
    server = await startCodeServer(scenario, root);
    page = await browser.newPage();
    await page.setViewport({ width: 1400, height: 900 });
    await page.goto(`http://127.0.0.1:${server.port}/?folder=${encodeURIComponent(server.workspace)}`);
    await until('the workbench', () => page.$('.monaco-workbench .part.statusbar'));
    await sleep(1000);
    await page.mouse.click(700, 450);
    out(`       ${scenario.name}: code-server and the workbench ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  } catch (e) {
    failed += scenario.steps.length;
    out(`FAIL ${scenario.name}: setting up code-server and the browser: ${e.message}`);
    if (server) out(`       code-server log: ${server.logFile}`);
    if (server) stopProcessGroup(server.child);
    return;
  }
  const ctx = {
    page,
    workspace: server.workspace,
    codeServer: server.child,
    state: {},
    log: (line) => out(`       ${line}`),
    screenshot: (what) => screenshot(page, `${scenario.name}: ${what}`),
  };
  let broken = null;
  for (const step of scenario.steps) {
    const name = `${scenario.name}: ${step.name}`;
    if (broken) {
      failed += 1;
      out(`FAIL ${name} (not run: "${broken}" failed)`);
      continue;
    }
    const s0 = Date.now();
    try {
      await step.run(ctx);
      await screenshot(page, name);
      passed += 1;
      out(`ok   ${name} (${((Date.now() - s0) / 1000).toFixed(1)}s)`);
    } catch (e) {
      await screenshot(page, `${name}-FAILED`);
      failed += 1;
      broken = step.name;
      out(`FAIL ${name}`);
      for (const line of String(e.stack || e).split('\n')) out(`       ${line}`);
    }
  }
  await page.close().catch(() => {});
  stopProcessGroup(server.child);
  if (!broken) fs.rmSync(root, { recursive: true, force: true });
  else out(`       workspace and code-server data kept in ${root}`);
}

const started = Date.now();
const browser = await puppeteer.launch({
  executablePath: opts.browser,
  headless: true,
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--window-size=1400,900'],
});
try {
  for (const scenario of scenarios) {
    if (opts.only && scenario.name !== opts.only) continue;
    await runScenario(scenario, browser);
  }
} finally {
  await browser.close().catch(() => {});
}
out(`screenshots and code-server logs: ${opts.artifacts}`);
out(`vscode-e2e took ${((Date.now() - started) / 1000).toFixed(0)}s`);
out(`vscode-e2e: ${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
