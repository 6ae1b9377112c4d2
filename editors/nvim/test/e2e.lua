-- Headless end-to-end test of the Neovim plugin (editors/nvim) against `relay lsp`.
--
--   nvim --headless -u NONE -l editors/nvim/test/e2e.lua
--   (editors/nvim/test/run.sh installs Neovim and does this)
--
-- Environment:
--   RELAY_NVIM_E2E   unset/empty: only the tests that need no server run; the server tests
--                    are skipped (exit code 0 if the rest pass). Set (e.g. 1): everything runs
--                    and any failure makes the exit code 1.
--   RELAY_BIN        the relay binary (default: `relay` on PATH); started as `$RELAY_BIN lsp`.
--   RELAY_NVIM_TIMEOUT_MS   how long to wait for each server answer (default 20000).
--
-- Ends with the line "N passed, M failed" (", K skipped" when server tests were skipped).

local script = debug.getinfo(1, 'S').source:sub(2)
local test_dir = vim.fn.fnamemodify(script, ':p:h')
local plugin_root = vim.fn.fnamemodify(test_dir, ':h')

local E2E = os.getenv('RELAY_NVIM_E2E')
E2E = E2E ~= nil and E2E ~= ''
local RELAY_BIN = os.getenv('RELAY_BIN')
if RELAY_BIN == nil or RELAY_BIN == '' then
  RELAY_BIN = 'relay'
end
local TIMEOUT = tonumber(os.getenv('RELAY_NVIM_TIMEOUT_MS') or '') or 20000

vim.opt.runtimepath:prepend(plugin_root)
vim.opt.swapfile = false
vim.opt.shadafile = 'NONE'
vim.cmd('filetype plugin on')
vim.cmd('syntax on')

local results = { passed = 0, failed = 0, skipped = 0 }

local function out(line)
  io.stdout:write(line .. '\n')
  io.stdout:flush()
end

local function test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    results.passed = results.passed + 1
    out('ok   ' .. name)
  else
    results.failed = results.failed + 1
    out('FAIL ' .. name)
    for line in tostring(err):gmatch('[^\n]+') do
      out('       ' .. line)
    end
  end
end

-- Route messages (vim.notify, print from LSP handlers) to indented stdout lines, and keep
-- them for tests that look for one.
local notified = {}
vim.notify = function(msg, level)
  table.insert(notified, tostring(msg))
  for line in tostring(msg):gmatch('[^\n]+') do
    out('       ' .. (level == vim.log.levels.ERROR and 'error: ' or level == vim.log.levels.WARN and 'warning: ' or '')
      .. line)
  end
end
_G.print = function(...)
  local parts = {}
  for i = 1, select('#', ...) do
    parts[i] = tostring(select(i, ...))
  end
  out('       ' .. table.concat(parts, ' '))
end

local function skip(name, why)
  results.skipped = results.skipped + 1
  out('skip ' .. name .. (why and (' (' .. why .. ')') or ''))
end

local function expect(cond, msg, ...)
  if not cond then
    error(select('#', ...) > 0 and msg:format(...) or msg, 2)
  end
end

local function buf_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
end

local function wait_for(what, cond, timeout)
  local ok = vim.wait(timeout or TIMEOUT, cond, 50)
  expect(ok, 'timed out after %d ms waiting for %s', timeout or TIMEOUT, what)
end

local tmpdir = vim.fn.tempname()
vim.fn.mkdir(tmpdir, 'p')

local function write_file(name, text)
  local path = tmpdir .. '/' .. name
  local f = assert(io.open(path, 'w'))
  f:write(text)
  f:close()
  return path
end

-- Opens `path` in the current window and waits for the relay client to attach.
local function open_and_attach(path)
  vim.cmd('edit ' .. vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  expect(vim.bo[buf].filetype == 'relay', 'filetype of %s is %q, not relay', path, vim.bo[buf].filetype)
  wait_for('the relay client to attach to ' .. path, function()
    return require('relay').client(buf) ~= nil
  end)
  return buf, require('relay').client(buf)
end

local function sync_request(buf, method, params)
  local responses, err = vim.lsp.buf_request_sync(buf, method, params, TIMEOUT)
  expect(responses ~= nil, '%s: no answer (%s)', method, tostring(err))
  for _, r in pairs(responses) do
    expect(r.err == nil, '%s failed: %s', method, vim.inspect(r.err))
    return r.result
  end
  return nil
end

-- Position of the first occurrence of `needle` on 1-based line `lnum`, as an LSP position.
local function pos_of(buf, lnum, needle)
  local line = vim.api.nvim_buf_get_lines(buf, lnum - 1, lnum, false)[1] or ''
  local col = line:find(needle, 1, true)
  expect(col ~= nil, 'line %d has no %q: %q', lnum, needle, line)
  return { line = lnum - 1, character = col - 1 }, col - 1
end

local function hover_text(result)
  expect(result ~= nil and result.contents ~= nil, 'hover returned nothing')
  local lines = vim.lsp.util.convert_input_to_markdown_lines(result.contents)
  return table.concat(lines, '\n')
end

-- Test inputs ------------------------------------------------------------------------------

-- `%y` is never declared: TVM reports "this local variable has not been previously declared".
local ERROR_SRC = [[
#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  add(%x, %y)
}
]]

-- add(1f, 2f) is constant: FoldConstant turns it into 3f.
local FOLD_SRC = [[
#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  %0 = add(1f, 2f);
  multiply(%x, %0)
}
]]

-- Comments in every place a formatter must keep them, in badly spaced code it must change.
local COMMENTS_SRC = [[
#[version = "0.0.5"]
// Leading comment of @helper.
def @helper(%a: Tensor[(2, 2), float32] /* the input */, %b: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  add(%a,    /* inside the arguments */ %b)   // trailing comment
}

/* Between definitions. */

def @main(%x: Tensor[(2, 2), float32]) -> Tensor[(2, 2), float32] {
  // Before the body.
  %0 = @helper(%x,%x);   // after a binding
  negative(  %0  )
}
// At the end.
]]
local COMMENTS = {
  '// Leading comment of @helper.',
  '/* the input */',
  '/* inside the arguments */',
  '// trailing comment',
  '/* Between definitions. */',
  '// Before the body.',
  '// after a binding',
  '// At the end.',
}

local function assert_folded(text)
  expect(not text:find('add(1f, 2f)', 1, true), 'add(1f, 2f) is still there:\n%s', text)
  expect(text:find('3f', 1, true) ~= nil, 'no folded constant 3f in:\n%s', text)
  expect(text:find('multiply(', 1, true) ~= nil, 'multiply( is gone:\n%s', text)
end

-- Tests that need no server --------------------------------------------------------------

local relay = require('relay')

test('plugin/relay.lua registers the filetype and sets up with defaults', function()
  vim.cmd('runtime plugin/relay.lua')
  expect(vim.g.loaded_relay == 1, 'g:loaded_relay not set')
  expect(relay._did_setup, 'setup() was not called')
  expect(vim.deep_equal(relay.cmd(), { 'relay', 'lsp' }), 'default cmd is %s', vim.inspect(relay.cmd()))
end)

relay.setup({ cmd = { RELAY_BIN, 'lsp' } })

test('filetype: *.relay and *.rly are relay', function()
  expect(vim.filetype.match({ filename = 'model.relay' }) == 'relay', 'model.relay not detected')
  expect(vim.filetype.match({ filename = 'prelude.rly' }) == 'relay', 'prelude.rly not detected')
end)

test('setup: user commands exist', function()
  local cmds = vim.api.nvim_get_commands({})
  for _, name in ipairs({ 'RelayApplyPass', 'RelayApplyPipeline', 'RelayPassOutput', 'RelayRestart', 'RelayGraph', 'RelayPassDiff', 'RelayRunFunction', 'RelayCheckSemantics' }) do
    expect(cmds[name] ~= nil, ':%s is not defined', name)
  end
end)

test('setup: server command is `$RELAY_BIN lsp`', function()
  expect(vim.deep_equal(relay.cmd(), { RELAY_BIN, 'lsp' }), 'cmd is %s', vim.inspect(relay.cmd()))
  if vim.lsp.config then
    local cfg = vim.lsp.config.relay
    expect(cfg and vim.deep_equal(cfg.cmd, { RELAY_BIN, 'lsp' }), 'vim.lsp.config.relay.cmd is %s',
      vim.inspect(cfg and cfg.cmd))
    expect(vim.tbl_contains(cfg.filetypes or {}, 'relay'), 'filetypes: %s', vim.inspect(cfg.filetypes))
  end
end)

test('setup: list options replace the defaults', function()
  relay.setup({ cmd = { RELAY_BIN, 'lsp' }, root_markers = { 'relay.toml' } })
  expect(vim.deep_equal(relay.config.root_markers, { 'relay.toml' }), 'root_markers: %s',
    vim.inspect(relay.config.root_markers))
  relay.setup({ cmd = { RELAY_BIN, 'lsp' } })
end)

test('pass list parsing accepts strings, objects and {passes=...}', function()
  local a = relay._parse_pass_list({ 'InferType', 'FoldConstant' })
  expect(#a == 2 and a[2].name == 'FoldConstant', vim.inspect(a))
  local b = relay._parse_pass_list({ passes = { { name = 'FoldConstant', opt_level = 2, description = 'folds' } } })
  expect(#b == 1 and b[1].opt_level == 2 and b[1].description == 'folds', vim.inspect(b))
  expect(#relay._parse_pass_list(vim.NIL) == 0, 'vim.NIL')
end)

test('ftplugin: comment settings', function()
  local buf = vim.api.nvim_create_buf(true, true)
  vim.api.nvim_set_current_buf(buf)
  vim.bo[buf].buftype = 'nofile' -- keeps the LSP away from this buffer
  vim.bo[buf].filetype = 'relay'
  expect(vim.bo[buf].commentstring == '// %s', 'commentstring = %q', vim.bo[buf].commentstring)
  vim.cmd('bwipeout!')
end)

test('syntax: sigils, numbers, nested comments, type comments, metadata', function()
  local buf = vim.api.nvim_create_buf(true, true)
  vim.api.nvim_set_current_buf(buf)
  vim.bo[buf].buftype = 'nofile'
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, {
    '#[version = "0.0.5"]',
    'def @main(%x: Tensor[(1, 3i64), float32]) {',
    '  %0 = nn.conv2d(%x, %x, channels=8) /* ty=Tensor[(1), float32] */;',
    '  /* outer /* inner */ still */ multiply(%0, -1.5f)',
    '}',
    '#[metadata]',
    '{"root": 1}',
  })
  vim.bo[buf].filetype = 'relay'
  expect(vim.b[buf].current_syntax == 'relay', 'b:current_syntax = %s', tostring(vim.b[buf].current_syntax))
  local function group(lnum, needle, nth)
    local line = vim.api.nvim_buf_get_lines(buf, lnum - 1, lnum, false)[1]
    local col = 0
    for _ = 1, nth or 1 do
      col = line:find(needle, col + 1, true)
    end
    return vim.fn.synIDattr(vim.fn.synID(lnum, col, 1), 'name')
  end
  local cases = {
    { 1, 'version', 'relayVersion' },
    { 2, 'def', 'relayKeyword' },
    { 2, '@main', 'relayGlobal' },
    { 2, '%x', 'relayLocal' },
    { 2, 'Tensor', 'relayType' },
    { 2, '3i64', 'relayNumber' },
    { 2, 'float32', 'relayDtype' },
    { 3, '%0', 'relayGraphVar' },
    { 3, 'nn.conv2d', 'relayOpName' },
    { 3, 'channels', 'relayAttrKey' },
    { 3, 'ty=', 'relayTypeComment' },
    { 4, 'inner', 'relayComment' },
    { 4, 'still', 'relayComment' },
    { 4, 'multiply', 'relayOpName' },
    { 4, '-1.5f', 'relayFloat' },
    { 6, 'metadata', 'relayMetadataStart' },
  }
  local bad = {}
  for _, c in ipairs(cases) do
    local got = group(c[1], c[2])
    if got ~= c[3] then
      table.insert(bad, ('line %d %q: %s, expected %s'):format(c[1], c[2], got, c[3]))
    end
  end
  local json_group = group(7, 'root')
  if not json_group:match('^json') then
    table.insert(bad, 'line 7 "root": ' .. json_group .. ', expected a json* group')
  end
  expect(#bad == 0, table.concat(bad, '; '))
  vim.cmd('bwipeout!')
end)

-- Tests that need the server ---------------------------------------------------------------

local server_tests = {}
-- opts.real_only: the test needs the real server (fake-relay does not implement it).
local function server_test(name, fn, opts)
  table.insert(server_tests, { name = name, fn = fn, real_only = opts and opts.real_only })
end
local FAKE = RELAY_BIN:match('fake%-relay$') ~= nil

server_test('diagnostics: an undeclared local is reported', function()
  local buf = open_and_attach(write_file('undeclared.relay', ERROR_SRC))
  wait_for('diagnostics', function()
    return #vim.diagnostic.get(buf) > 0
  end)
  local diags = vim.diagnostic.get(buf)
  local errors = vim.tbl_filter(function(d)
    return d.severity == vim.diagnostic.severity.ERROR
  end, diags)
  expect(#errors > 0, 'no error among %s', vim.inspect(diags))
  local on_line = vim.tbl_filter(function(d)
    return d.lnum == 2
  end, errors)
  expect(#on_line > 0, 'no error on line 3 (add(%%x, %%y)): %s', vim.inspect(errors))
  out('       diagnostic: ' .. on_line[1].message:gsub('\n.*', ''))
end)

server_test('hover: a variable shows its Relay type', function()
  local buf = open_and_attach(write_file('hover.relay', FOLD_SRC))
  local pos = pos_of(buf, 4, '%x')
  pos.character = pos.character + 1
  local text = hover_text(sync_request(buf, 'textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = pos,
  }))
  expect(text:find('Tensor[', 1, true) ~= nil, 'hover text has no Tensor[: %q', text)
end)

server_test('code action "FoldConstant" folds add(1f, 2f)', function()
  local buf = open_and_attach(write_file('fold.relay', FOLD_SRC))
  local before = buf_text(buf)
  local _, col = pos_of(buf, 3, 'add')
  vim.api.nvim_win_set_cursor(0, { 3, col })
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  local offered = {}
  vim.lsp.buf.code_action({
    apply = true,
    range = { start = { 1, 0 }, ['end'] = { vim.api.nvim_buf_line_count(buf), 0 } },
    filter = function(action)
      table.insert(offered, action.title)
      return action.title:find('FoldConstant', 1, true) ~= nil
    end,
  })
  local ok = vim.wait(TIMEOUT, function()
    return vim.api.nvim_buf_get_changedtick(buf) ~= tick and buf_text(buf) ~= before
  end, 50)
  expect(ok, 'buffer unchanged after the FoldConstant code action; actions offered: %s', vim.inspect(offered))
  assert_folded(buf_text(buf))
end)

server_test('rename: vim.lsp.buf.rename renames a local everywhere', function()
  local buf = open_and_attach(write_file('rename.relay', FOLD_SRC))
  local pos, col = pos_of(buf, 2, '%x')
  vim.api.nvim_win_set_cursor(0, { 2, col + 1 })
  -- Does the server's rename range include the % sigil? Then the new name does too.
  local new_name = 'inp'
  local caps = require('relay').client(buf).server_capabilities
  if type(caps.renameProvider) == 'table' and caps.renameProvider.prepareProvider then
    pos.character = pos.character + 1
    local prep = sync_request(buf, 'textDocument/prepareRename', {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      position = pos,
    })
    local placeholder = prep and (prep.placeholder or (prep.range and vim.api.nvim_buf_get_text(buf,
      prep.range.start.line, prep.range.start.character, prep.range['end'].line, prep.range['end'].character, {})[1]))
      or (prep and prep.start and vim.api.nvim_buf_get_text(buf, prep.start.line, prep.start.character,
        prep['end'].line, prep['end'].character, {})[1])
    if placeholder and placeholder:sub(1, 1) == '%' then
      new_name = '%inp'
    end
  end
  local before = buf_text(buf)
  vim.lsp.buf.rename(new_name)
  wait_for('the rename edit', function()
    return buf_text(buf) ~= before
  end)
  local text = buf_text(buf)
  local _, uses = text:gsub('%%inp%f[^%w_/]', '')
  expect(uses >= 2, 'expected %%inp at the parameter and its use:\n%s', text)
  expect(not text:find('%%x%f[^%w_/]'), '%%x is still there:\n%s', text)
end)

server_test('formatting: vim.lsp.buf.format keeps comments', function()
  local src = table.concat({
    '#[version = "0.0.5"]',
    '// The model.',
    'def @main(%x: float32, /* second */ %y: float32) { %0 = add(%x,%y) /* ty=float32 */; // sum',
    '  /* result */ %0 }',
  }, '\n') .. '\n'
  local buf = open_and_attach(write_file('format.relay', src))
  vim.lsp.buf.format({ bufnr = buf, timeout_ms = TIMEOUT })
  local want = table.concat({
    '#[version = "0.0.5"]',
    '// The model.',
    'def @main(%x: float32, /* second */ %y: float32) {',
    '  %0 = add(%x, %y) /* ty=float32 */; // sum',
    '  /* result */ %0',
    '}',
  }, '\n')
  local got = buf_text(buf)
  expect(got == want, 'formatted buffer:\n%s\nexpected:\n%s', got, want)
end, { real_only = true })

server_test(':RelayApplyPass completes pass names', function()
  open_and_attach(write_file('complete.relay', FOLD_SRC))
  local got = vim.fn.getcompletion('RelayApplyPass Fold', 'cmdline')
  expect(vim.tbl_contains(got, 'FoldConstant'), 'completions: %s', vim.inspect(got))
end)

server_test(':RelayApplyPass FoldConstant edits the buffer', function()
  local buf = open_and_attach(write_file('applypass.relay', FOLD_SRC))
  local before = buf_text(buf)
  vim.cmd('RelayApplyPass FoldConstant')
  wait_for('the FoldConstant edit', function()
    return buf_text(buf) ~= before
  end)
  assert_folded(buf_text(buf))
end)

server_test('code action "Apply pass…" picks the pass with vim.ui.select', function()
  local buf = open_and_attach(write_file('pickpass.relay', FOLD_SRC))
  local before = buf_text(buf)
  local _, col = pos_of(buf, 3, 'add')
  vim.api.nvim_win_set_cursor(0, { 3, col })
  local shown, offered, applicable = nil, {}, nil
  local select = vim.ui.select
  vim.ui.select = function(items, _, on_choice)
    shown = items
    for _, item in ipairs(items) do
      if item.name == 'FoldConstant' then
        return on_choice(item)
      end
    end
    on_choice(nil)
  end
  local ok, err = pcall(function()
    vim.lsp.buf.code_action({
      apply = true,
      filter = function(action)
        table.insert(offered, action.title)
        if action.title == 'Apply pass…' and type(action.command) == 'table' then
          applicable = (action.command.arguments or {})[1].applicable
        end
        return action.title == 'Apply pass…'
      end,
    })
    wait_for('the pass picked with vim.ui.select to edit the buffer (actions offered: '
      .. table.concat(offered, ', ') .. ')', function()
      return buf_text(buf) ~= before
    end)
  end)
  vim.ui.select = select
  expect(ok, tostring(err))
  -- The passes that change the code here (the action's `applicable`) come first.
  expect(type(applicable) == 'table' and vim.tbl_contains(applicable, 'FoldConstant'),
    '"Apply pass…" does not say FoldConstant changes the code here: %s', vim.inspect(applicable))
  expect(shown and #shown > #applicable, 'the picker shows %s', vim.inspect(shown))
  local first = vim.tbl_map(function(p)
    return p.name
  end, vim.list_slice(shown, 1, #applicable))
  table.sort(first)
  local wanted = vim.deepcopy(applicable)
  table.sort(wanted)
  expect(vim.deep_equal(first, wanted), 'the picker does not list the applicable passes first: %s',
    vim.inspect(first))
  assert_folded(buf_text(buf))
end)

server_test('code actions at the cursor: the passes that change it and "Apply pass…"', function()
  local buf = open_and_attach(write_file('fewactions.relay', FOLD_SRC))
  local pos = pos_of(buf, 3, 'add')
  local actions = sync_request(buf, 'textDocument/codeAction', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = pos, ['end'] = pos },
    context = { diagnostics = {} },
  }) or {}
  local titles = vim.tbl_map(function(a)
    return a.title
  end, actions)
  expect(vim.tbl_contains(titles, 'Apply FoldConstant'), 'no Apply FoldConstant: %s', vim.inspect(titles))
  expect(vim.tbl_contains(titles, 'Apply pass…'), 'no Apply pass…: %s', vim.inspect(titles))
  expect(not vim.tbl_contains(titles, 'Apply AlterOpLayout'), 'a pass with nothing to do is offered: %s',
    vim.inspect(titles))
  expect(#titles <= 12, '%d actions: %s', #titles, vim.inspect(titles))
end, { real_only = true })

server_test('formatting (vim.lsp.buf.format) keeps every comment', function()
  local buf = open_and_attach(write_file('comments.relay', COMMENTS_SRC))
  local before = buf_text(buf)
  vim.lsp.buf.format({ bufnr = buf, async = false, timeout_ms = TIMEOUT })
  local after = buf_text(buf)
  local from, missing = 1, {}
  for _, comment in ipairs(COMMENTS) do
    local at = after:find(comment, from, true)
    if at then
      from = at + #comment
    else
      table.insert(missing, comment)
    end
  end
  expect(#missing == 0, 'comments lost or moved out of order by formatting: %s\n--- formatted:\n%s',
    table.concat(missing, ', '), after)
  expect(after ~= before, 'formatting changed nothing (the badly spaced code stayed):\n%s', after)
  expect(after:find('negative(%0)', 1, true) ~= nil, 'negative(  %%0  ) was not formatted:\n%s', after)
end, { real_only = true })

server_test(':RelayApplyPipeline InferType, FoldConstant edits the buffer', function()
  local buf = open_and_attach(write_file('applypipeline.relay', FOLD_SRC))
  local before = buf_text(buf)
  vim.cmd('RelayApplyPipeline InferType, FoldConstant')
  wait_for('the pipeline edit', function()
    return buf_text(buf) ~= before
  end)
  assert_folded(buf_text(buf))
end)

server_test('Neovim 0.8-0.10 path: vim.lsp.start from a FileType autocmd attaches', function()
  relay.setup({ cmd = { RELAY_BIN, 'lsp' }, _legacy_start = true })
  local ok, err = pcall(function()
    local autocmds = vim.api.nvim_get_autocmds({ group = 'relay_lsp', event = 'FileType' })
    expect(#autocmds == 1, 'FileType autocmds in group relay_lsp: %d', #autocmds)
    if vim.lsp.is_enabled then
      expect(not vim.lsp.is_enabled('relay'), 'vim.lsp.enable is still on for relay')
    end
    local buf = open_and_attach(write_file('legacy.relay', ERROR_SRC))
    wait_for('diagnostics', function()
      return #vim.diagnostic.get(buf) > 0
    end)
  end)
  relay.setup({ cmd = { RELAY_BIN, 'lsp' } })
  expect(ok, tostring(err))
  if vim.lsp.is_enabled then
    expect(vim.lsp.is_enabled('relay'), 'setup() did not re-enable relay')
  end
  if vim.lsp.enable then
    local has_group, left = pcall(vim.api.nvim_get_autocmds, { group = 'relay_lsp' })
    expect(not has_group or #left == 0, 'the legacy autocmd survived setup()')
  end
end)

server_test(':RelayRestart starts a new server for the buffer', function()
  local buf, client = open_and_attach(write_file('restart.relay', FOLD_SRC))
  local old_id = client.id
  vim.cmd('RelayRestart')
  wait_for('a new relay client', function()
    local c = require('relay').client(buf)
    return c ~= nil and c.id ~= old_id
  end)
end)

server_test(':RelayPassOutput shows the final stage in a split', function()
  local buf = open_and_attach(write_file('passoutput.relay', FOLD_SRC))
  local before = buf_text(buf)
  local wins = #vim.api.nvim_tabpage_list_wins(0)
  vim.cmd('RelayPassOutput InferType, FoldConstant')
  wait_for('the pass output split', function()
    return #vim.api.nvim_tabpage_list_wins(0) > wins
  end)
  local out_buf = vim.api.nvim_get_current_buf()
  expect(out_buf ~= buf, 'still in the source buffer')
  expect(vim.bo[out_buf].filetype == 'relay', 'output filetype %q', vim.bo[out_buf].filetype)
  expect(vim.bo[out_buf].buftype == 'nofile', 'output buftype %q', vim.bo[out_buf].buftype)
  assert_folded(buf_text(out_buf))
  local stages = vim.b[out_buf].relay_pass_stages
  expect(type(stages) == 'table' and #stages == 2, 'stages: %s', vim.inspect(stages))
  expect(stages[1].pass == 'InferType' and stages[2].pass == 'FoldConstant', 'stage names: %s', vim.inspect(stages))
  expect(type(stages[2].timeMs) == 'number', 'timeMs: %s', vim.inspect(stages[2].timeMs))
  expect(buf_text(buf) == before, 'the source buffer was modified')
  expect(#vim.lsp.get_clients({ bufnr = out_buf }) == 0, 'the language server attached to the scratch buffer')
  vim.cmd('close')
end)

server_test(':RelayGraph writes the SVG of the function under the cursor', function()
  local buf = open_and_attach(write_file('graph.relay', FOLD_SRC))
  local relay = require('relay')
  relay.config.graph_open = false
  relay.config.graph_dir = tmpdir
  vim.api.nvim_win_set_cursor(0, { 3, 2 })
  local path = tmpdir .. '/main.svg'
  vim.fn.delete(path)
  vim.cmd('RelayGraph')
  wait_for('the SVG file', function()
    return vim.fn.filereadable(path) == 1 and vim.fn.getfsize(path) > 0
  end)
  local svg = table.concat(vim.fn.readfile(path), '\n')
  expect(svg:match('^<svg'), 'not an SVG: %s', svg:sub(1, 80))
  expect(svg:find('>multiply<', 1, true) and svg:find('>add<', 1, true), 'the calls are not drawn')
  expect(vim.tbl_contains(notified, 'relay: graph of @main: ' .. path), 'the path was not printed')
  expect(vim.api.nvim_get_current_buf() == buf, 'left the source buffer')
end, { real_only = true })

test('the code lens commands are registered client-side', function()
  for _, name in ipairs({ 'relay.showGraph', 'relay.pipelineExplorer', 'relay.runFunction' }) do
    expect(type(vim.lsp.commands[name]) == 'function', 'no client command %s', name)
  end
end)

server_test(':RelayPassDiff 2 diffs stage 2 against stage 1 in a new tab', function()
  local buf = open_and_attach(write_file('passdiff.relay', FOLD_SRC))
  local tabs = #vim.api.nvim_list_tabpages()
  vim.cmd('RelayPassDiff 2 InferType, FoldConstant')
  wait_for('the diff tab', function()
    return #vim.api.nvim_list_tabpages() > tabs
  end)
  local wins = vim.api.nvim_tabpage_list_wins(0)
  expect(#wins == 2, 'windows in the diff tab: %d', #wins)
  for _, w in ipairs(wins) do
    expect(vim.wo[w].diff, 'window %d is not in diff mode', w)
  end
  local texts = {}
  for _, w in ipairs(wins) do
    local b = vim.api.nvim_win_get_buf(w)
    local side = vim.api.nvim_buf_get_name(b):match('/(%a+)%-%a+$')
    texts[side] = buf_text(b)
  end
  expect(texts.before and texts.after, 'buffers: %s', vim.inspect(vim.tbl_keys(texts)))
  expect(texts.before:find('add(1f, 2f)', 1, true), 'stage 1 still adds: %s', texts.before)
  assert_folded(texts.after)
  vim.cmd('tabclose')
  expect(vim.api.nvim_buf_is_valid(buf), 'the source buffer is gone')
end)

server_test('trust: relay.toml commands run only once :RelayTrust trusts the project', function()
  if RELAY_BIN:match('fake%-relay$') then
    return -- the stand-in server has no relay.toml support
  end
  local dir = tmpdir .. '/trust-project'
  vim.fn.mkdir(dir, 'p')
  local toml = dir .. '/relay.toml'
  local f = assert(io.open(toml, 'w'))
  f:write('on_save = ["mark"]\n[pipelines]\nmark = "Mark"\n[passes.Mark]\n'
    .. 'command = ["sh", "-c", "echo ran >> ran.txt; cat"]\n')
  f:close()
  local ran = dir .. '/ran.txt'
  local function told_untrusted()
    return vim.tbl_filter(function(m)
      return m:find('not trusted', 1, true) ~= nil
    end, notified)
  end
  local before = #told_untrusted()
  local buf = open_and_attach(write_file('trust-project/model.relay', FOLD_SRC))
  expect(not require('relay').is_trusted(toml), 'relay.toml is trusted before :RelayTrust')
  vim.cmd('write')
  wait_for('the server to say it skipped the command', function()
    return #told_untrusted() > before
  end)
  local message = told_untrusted()[#told_untrusted()]
  expect(message:find('sh -c echo ran >> ran.txt; cat', 1, true), 'the message names no command: %s', message)
  expect(vim.fn.filereadable(ran) == 0, 'the external command ran in an untrusted project')
  vim.cmd('RelayTrust')
  expect(require('relay').is_trusted(toml), ':RelayTrust did not trust relay.toml')
  vim.cmd('write')
  wait_for('the on-save pipeline to run the command', function()
    return vim.fn.filereadable(ran) == 1
  end)
  expect(#told_untrusted() == before + 1, 'told more than once: %s', vim.inspect(told_untrusted()))
  expect(vim.api.nvim_buf_is_valid(buf), 'the buffer went away')
end)

server_test(':RelayFindPattern highlights and lists every match', function()
  local find = require('relay.find_pattern')
  local buf = open_and_attach(write_file('find-pattern.relay', FOLD_SRC))
  local done, err, items = false, nil, nil
  find.find('add(*, *)', buf, function(e, found)
    done, err, items = true, e, found
  end)
  wait_for('the matches of add(*, *)', function()
    return done
  end)
  expect(err == nil, 'relay.findPattern failed: %s', vim.inspect(err))
  expect(#items == 1 and items[1].lnum == 3, 'expected one match on line 3: %s', vim.inspect(items))
  local marks = vim.api.nvim_buf_get_extmarks(buf, find.namespace, 0, -1, { details = true })
  expect(#marks == 1 and marks[1][2] == 2, 'expected one highlight on line 3: %s', vim.inspect(marks))
  expect(#vim.fn.getqflist() == 1, 'the quickfix list has %d entries', #vim.fn.getqflist())
  -- A pattern that does not parse: an error showing where, the server still answers.
  done = false
  find.find('nn.relu(_)', buf, function(e)
    done, err = true, e
  end)
  wait_for('the error of nn.relu(_)', function()
    return done
  end)
  expect(err and err.message:find('stands for the pattern before', 1, true), 'no parse error: %s', vim.inspect(err))
  vim.cmd('RelayFindPatternClear')
  expect(#vim.api.nvim_buf_get_extmarks(buf, find.namespace, 0, -1, {}) == 0, 'highlights left after clearing')
end, { real_only = true })

-- A module and a deliberately wrong external pass (every `add` becomes `subtract`).
local RUN_SRC = [[#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  %0 = add(%x, 1f);
  nn.relu(%0)
}
]]

server_test('the "Run with random inputs" lens runs @main and its title shows the result', function()
  local buf = open_and_attach(write_file('run-lens.relay', RUN_SRC))
  local function lens_titles()
    local titles = {}
    for _, lens in ipairs(vim.lsp.codelens.get(buf)) do
      if lens.command then
        table.insert(titles, lens.command.title)
      end
    end
    return titles
  end
  wait_for('the run lens', function()
    return vim.tbl_contains(lens_titles(), '▶ Run with random inputs')
  end)
  -- As a user runs a lens: the cursor on its line, vim.lsp.codelens.run(), which asks with
  -- vim.ui.select which of the line's lenses (Graph, the size, Run with random inputs).
  local select = vim.ui.select
  local offered = {}
  vim.ui.select = function(items, opts, on_choice)
    for i, item in ipairs(items) do
      local title = opts.format_item and opts.format_item(item) or tostring(item)
      table.insert(offered, title)
      if title:find('Run with random inputs', 1, true) then
        return on_choice(item, i)
      end
    end
    on_choice(nil, nil)
  end
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  local ok, err = pcall(vim.lsp.codelens.run)
  vim.ui.select = select
  expect(ok, 'codelens.run: %s', tostring(err))
  wait_for('the summary to be printed', function()
    for _, m in ipairs(notified) do
      if m:find('relay: @main (seed 0): (2, 3) float32 min', 1, true) then
        return true
      end
    end
    return false
  end)
  wait_for('the lens title with the result', function()
    for _, t in ipairs(lens_titles()) do
      if t:match('^▶ Random inputs: %(2, 3%) float32 min [%d.e-]+ max [%d.e-]+ mean [%d.e-]+ · seed 0$') then
        return true
      end
    end
    return false
  end)
  out('       lenses: ' .. table.concat(lens_titles(), ' | '))
end, { real_only = true })

server_test(':RelayRunFunction reports a run-time error at its place', function()
  local buf = open_and_attach(write_file('run-error.relay', [[#[version = "0.0.5"]
type List[A] { Cons(A, List[A]), Nil }
def @main() -> float32 {
  match? (Nil) { Cons(%x, _) => %x }
}
]]))
  vim.api.nvim_win_set_cursor(0, { 4, 0 })
  local done, result = false, nil
  require('relay.run').run_function(nil, buf, function(_, r)
    done, result = true, r
  end)
  wait_for('the run', function()
    return done
  end)
  expect(result and result.error and result.error.range.start.line == 3, 'error: %s', vim.inspect(result))
  wait_for('the run-time error diagnostic', function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.lnum == 3 and d.message:find('running @main on random inputs', 1, true) then
        return true
      end
    end
    return false
  end)
end, { real_only = true })

server_test('writing relay.toml applies its declared operators to the open module at once', function()
  local dir = tmpdir .. '/declared'
  vim.fn.mkdir(dir, 'p')
  local toml = dir .. '/relay.toml'
  local function rule(output)
    return { '[ops."vendor.norm"]', 'args = ["data"]', 'output = "' .. output .. '"' }
  end
  vim.fn.writefile(rule('input 0'), toml)
  local buf = open_and_attach(write_file('declared/model.relay', table.concat({
    '#[version = "0.0.5"]',
    'def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {',
    '  vendor.norm(%x)',
    '}',
    '',
  }, '\n')))
  local function errors()
    return vim.tbl_filter(function(d)
      return d.severity == vim.diagnostic.severity.ERROR
    end, vim.diagnostic.get(buf))
  end
  -- The first analysis publishes (an empty list) before this check.
  vim.wait(1500)
  expect(#errors() == 0, 'errors under the first rule: %s', vim.inspect(errors()))
  -- The rule changes in a buffer and is written there; the module is not edited.
  vim.cmd('split ' .. vim.fn.fnameescape(toml))
  vim.api.nvim_buf_set_lines(0, 0, -1, false, rule('Tensor[(1), uint32]'))
  vim.cmd('write')
  vim.cmd('close')
  wait_for('an error from the new rule, without an edit of the module', function()
    return #errors() > 0
  end)
  out('       after :write of relay.toml: ' .. errors()[1].message:gsub('\n.*', ''))
end, { real_only = true })

server_test(':RelayCheckSemantics names the pass that changed the result', function()
  local dir = tmpdir .. '/semantics'
  vim.fn.mkdir(dir, 'p')
  local f = assert(io.open(dir .. '/relay.toml', 'w'))
  f:write('[passes.AddToSubtract]\ncommand = ["sed", "-e", "s/add(/subtract(/"]\nrequired = ["InferType"]\n')
  f:close()
  local relay = require('relay')
  relay.config.trust = true
  local buf = open_and_attach(write_file('semantics/model.relay', RUN_SRC))
  relay.sync_trust(buf)
  local done, result = false, nil
  require('relay.run').check_semantics('FoldConstant, AddToSubtract', buf, function(_, r)
    done, result = true, r
  end)
  wait_for('the check', function()
    return done
  end)
  local d = result and result.difference
  expect(d and d ~= vim.NIL and d.pass == 'AddToSubtract', 'no difference at AddToSubtract: %s', vim.inspect(result))
  expect(d.element:match('^output%[%d, %d%]$') and d.before ~= d.after, 'element: %s', vim.inspect(d))
  expect(vim.fn.filereadable(dir .. '/relay-check-semantics/before.relay') == 1, 'no reproducer')
  wait_for('the diagnostic at @main', function()
    for _, dg in ipairs(vim.diagnostic.get(buf)) do
      if dg.lnum == 1 and dg.message:find('semantic check: pass AddToSubtract', 1, true) then
        return true
      end
    end
    return false
  end)
  -- A correct pipeline agrees.
  done = false
  vim.cmd('RelayCheckSemantics FoldConstant, ToANormalForm')
  wait_for('the second check', function()
    for _, m in ipairs(notified) do
      if m:find('FoldConstant, ToANormalForm: the results agree (', 1, true) and not m:find('(0 passes', 1, true) then
        return true
      end
    end
    return false
  end)
  relay.config.trust = nil
end, { real_only = true })

if not E2E then
  out('skip server tests: RELAY_NVIM_E2E is not set. To run them against the language server:')
  out('       RELAY_NVIM_E2E=1 RELAY_BIN=/path/to/relay editors/nvim/test/run.sh')
  for _, t in ipairs(server_tests) do
    skip(t.name)
  end
elseif vim.fn.executable(RELAY_BIN) ~= 1 then
  for _, t in ipairs(server_tests) do
    test(t.name, function()
      error(('RELAY_BIN=%s is not an executable (set RELAY_BIN to the relay binary)'):format(RELAY_BIN))
    end)
  end
else
  out('server: ' .. vim.fn.exepath(RELAY_BIN) .. ' lsp')
  for _, t in ipairs(server_tests) do
    if t.real_only and FAKE then
      skip(t.name, 'needs the real server')
    else
      test(t.name, t.fn)
    end
    vim.cmd('silent! %bwipeout!')
  end
end

if results.failed > 0 and E2E then
  local log = vim.lsp.log and vim.lsp.log.get_filename and vim.lsp.log.get_filename() or vim.lsp.get_log_path()
  out('LSP log: ' .. log)
end

for _, client in ipairs(vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()) do
  client.stop(client, true)
end
vim.wait(1000, function()
  return #(vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()) == 0
end, 50)
vim.fn.delete(tmpdir, 'rf')

local summary = ('%d passed, %d failed'):format(results.passed, results.failed)
if results.skipped > 0 then
  summary = summary .. (', %d skipped'):format(results.skipped)
end
out(summary)
os.exit(results.failed > 0 and 1 or 0)
