// Runs the TextMate grammar tests (vscode-tmgrammar-test over test/grammar/*.relay) and prints
// a summary line "grammar: N passed, M failed" counted per asserted source line.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const caseDir = join(root, 'test', 'grammar');
const files = readdirSync(caseDir).filter((f) => f.endsWith('.relay')).sort();
if (files.length === 0) {
  console.error('no grammar test files in test/grammar');
  process.exit(1);
}

// vscode-tmgrammar-test's assertion regex backtracks catastrophically (hangs) on a line with
// two " - " exclusion separators; refuse such lines up front.
let assertions = 0;
let lint = 0;
for (const f of files) {
  readFileSync(join(caseDir, f), 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (/^\/\/\s*(\^|<~*-)/.test(line)) {
        assertions += (line.match(/\^+/g) ?? ['<-']).length;
        if (line.split(' - ').length > 2) {
          console.error(`${f}:${i + 1}: more than one " - " in an assertion (put all excluded scopes after one " - ")`);
          lint++;
        }
      }
    });
}
if (lint) {
  process.exit(1);
}

const report = mkdtempSync(join(tmpdir(), 'relay-grammar-'));
const bin = join(root, 'node_modules', 'vscode-tmgrammar-test', 'dist', 'unit.js');
const run = spawnSync(
  process.execPath,
  [bin, '-g', 'syntaxes/relay.tmLanguage.json', '--xunit-report', report, ...files.map((f) => `test/grammar/${f}`)],
  { cwd: root, stdio: 'inherit', timeout: 300_000 },
);

let tests = 0;
let failures = 0;
for (const x of readdirSync(report).filter((f) => f.endsWith('.xml'))) {
  const xml = readFileSync(join(report, x), 'utf8');
  tests += Number(/tests="(\d+)"/.exec(xml)?.[1] ?? 0);
  failures += Number(/failures="(\d+)"/.exec(xml)?.[1] ?? 0) + Number(/errors="(\d+)"/.exec(xml)?.[1] ?? 0);
}
rmSync(report, { recursive: true, force: true });

const ok = run.status === 0 && failures === 0 && tests > 0;
if (run.error || run.status !== 0) {
  console.error(`vscode-tmgrammar-test exited with ${run.error ? run.error.message : `status ${run.status}`}`);
  if (failures === 0) failures = 1;
}
console.log(`${files.length} grammar test files, ${assertions} scope assertions on ${tests} source lines`);
console.log(`grammar: ${tests - Math.min(failures, tests)} passed, ${failures} failed`);
process.exit(ok ? 0 : 1);
