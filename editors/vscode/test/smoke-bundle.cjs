// Loads the bundled extension (out/extension.js) under Node with a stub `vscode` module and
// checks that it needs nothing but `vscode` and Node's built-in modules (so the .vsix can ship
// without node_modules) and that it exports activate/deactivate.
const Module = require('module');
const path = require('path');

const bundle = path.join(__dirname, '..', 'out', 'extension.js');
const stub = new Proxy(function () {}, {
  get: (_t, prop) => (prop === Symbol.toPrimitive ? () => '' : stub),
  apply: () => stub,
  construct: () => stub,
});
const requested = new Set();
const load = Module._load;
Module._load = function (request, parent, isMain) {
  if (parent && parent.filename === bundle) requested.add(request);
  if (request === 'vscode') return stub;
  return load.call(this, request, parent, isMain);
};

let failed = 0;
function check(name, ok) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}`);
  if (!ok) failed++;
}
if (!require('fs').existsSync(bundle)) {
  console.error('out/extension.js is missing: run `npm run build` first');
  process.exit(1);
}
const ext = require(bundle);
check('out/extension.js exports activate()', typeof ext.activate === 'function');
check('out/extension.js exports deactivate()', typeof ext.deactivate === 'function');
const builtins = new Set(Module.builtinModules);
const foreign = [...requested].filter((r) => r !== 'vscode' && !builtins.has(r.replace(/^node:/, '')));
check(`bundle requires only vscode and Node built-ins${foreign.length ? ` (also: ${foreign.join(', ')})` : ''}`, foreign.length === 0);
process.exitCode = failed ? 1 : 0;
