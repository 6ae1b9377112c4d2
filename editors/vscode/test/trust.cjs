// Workspace Trust, checked without VS Code: package.json declares limited support for
// untrusted workspaces (and keeps the server path out of workspace settings there), and
// src/trust.ts — bundled here on its own against a stub `vscode` — sends `trusted` in the
// initialization options and forwards a trust grant to the server as
// workspace/didChangeConfiguration { settings: { trusted: true } }.
const esbuild = require('esbuild');
const fs = require('fs');
const Module = require('module');
const path = require('path');

let failed = 0;
function check(name, ok) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}`);
  if (!ok) failed++;
}

const root = path.join(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const untrusted = pkg.capabilities?.untrustedWorkspaces ?? {};
check('package.json: untrustedWorkspaces.supported is "limited"', untrusted.supported === 'limited');
check('package.json: untrustedWorkspaces.description says what is limited', /relay\.toml/.test(untrusted.description ?? ''));
check(
  'package.json: relay.server.path is a restricted configuration',
  (untrusted.restrictedConfigurations ?? []).includes('relay.server.path'),
);

const outfile = path.join(root, 'out', 'test', 'trust.js');
esbuild.buildSync({
  entryPoints: [path.join(root, 'src', 'trust.ts')],
  bundle: true,
  outfile,
  external: ['vscode'],
  format: 'cjs',
  platform: 'node',
  logLevel: 'warning',
});

let grant;
const vscode = {
  workspace: {
    isTrusted: false,
    onDidGrantWorkspaceTrust(listener) {
      grant = listener;
      return { dispose() {} };
    },
  },
};
const load = Module._load;
Module._load = function (request, parent, isMain) {
  if (request === 'vscode') return vscode;
  return load.call(this, request, parent, isMain);
};
const trust = require(outfile);

check('untrusted workspace: initializationOptions.trusted is false', trust.trustOptions().trusted === false);
vscode.workspace.isTrusted = true;
check('trusted workspace: initializationOptions.trusted is true', trust.trustOptions().trusted === true);

const sent = [];
const client = { sendNotification: async (method, params) => sent.push({ method, params }) };
trust.forwardTrustGrants(() => client);
check('a listener for onDidGrantWorkspaceTrust is registered', typeof grant === 'function');
grant?.();
check(
  'granting trust sends workspace/didChangeConfiguration { settings: { trusted: true } }',
  sent.length === 1 &&
    sent[0].method === 'workspace/didChangeConfiguration' &&
    sent[0].params?.settings?.trusted === true,
);
trust.forwardTrustGrants(() => undefined);
grant?.();
check('no client running: nothing is sent and nothing throws', sent.length === 1);
console.log(`trust: ${failed ? 'FAILED' : 'all passed'}`);
process.exitCode = failed ? 1 : 0;
