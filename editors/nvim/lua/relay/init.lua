-- Neovim support for the TVM Relay text format (.relay, .rly) and its language server,
-- `relay lsp`. See editors/nvim/README.md.
--
--   require('relay').setup({
--     cmd = { '/path/to/relay', 'lsp' },   -- or server_path = '/path/to/relay'
--   })
--
-- Works on Neovim 0.8 and later: on 0.11+ through vim.lsp.config/vim.lsp.enable, before
-- that through vim.lsp.start from a FileType autocommand.

local M = {}

M.defaults = {
  -- Full server command; when nil it is { server_path, 'lsp', unpack(extra_args) }.
  cmd = nil,
  server_path = 'relay',
  extra_args = {},
  filetypes = { 'relay' },
  root_markers = { '.git', 'Cargo.toml' },
  -- Pipeline used by :RelayApplyPipeline and :RelayPassOutput when none is given.
  default_pipeline = 'InferType, FoldConstant',
  settings = {},
  init_options = nil,
  capabilities = nil,
  on_attach = nil,
  -- :RelayGraph: the directory the SVG is written to (nil: Neovim's temporary directory),
  -- and whether to open it with the system viewer (vim.ui.open).
  graph_dir = nil,
  graph_open = true,
  -- Start the server automatically for relay buffers.
  autostart = true,
  -- Show the server's code lenses ("Run with random inputs", "Graph", …) and refresh them on
  -- attach, BufEnter, InsertLeave and write.
  codelens = true,
  -- Whether the server may run the commands of relay.toml's external passes (also on save).
  -- nil: only when relay.toml is trusted through vim.secure (`:trust`, or :RelayTrust);
  -- true/false: always/never.
  trust = nil,
  -- Use the Neovim 0.8-0.10 code path (vim.lsp.start from a FileType autocommand) even on
  -- 0.11+; for testing that path.
  _legacy_start = false,
}

M.config = vim.deepcopy(M.defaults)
M._did_setup = false

local SERVER_APPLY_PIPELINE = 'relay.applyPipeline'
-- The command of the server's "Apply pass…" code action, implemented here (M.pick_pass).
local CLIENT_APPLY_PASS = 'relay.applyPass'
local SERVER_LIST_PASSES = 'relay.listPasses'
local PASS_OUTPUT = 'relay/passOutput'

local function has(version)
  return vim.fn.has('nvim-' .. version) == 1
end

local function notify(msg, level)
  vim.notify('relay: ' .. msg, level or vim.log.levels.INFO)
end

local function json_decode(text)
  local ok, value
  if vim.json and vim.json.decode then
    ok, value = pcall(vim.json.decode, text)
  else
    ok, value = pcall(vim.fn.json_decode, text)
  end
  if ok then
    return value
  end
  return nil
end

-- Client methods are called with ':' from 0.11 on; before that they were closures.
local function client_request(client, method, params, handler, bufnr)
  if has('0.11') then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function client_request_sync(client, method, params, timeout_ms, bufnr)
  if has('0.11') then
    return client:request_sync(method, params, timeout_ms, bufnr)
  end
  return client.request_sync(method, params, timeout_ms, bufnr)
end

local function get_clients(filter)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients(filter)
  end
  return vim.lsp.get_active_clients(filter)
end

--- The relay client attached to `bufnr` (default: current buffer), or nil.
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  return get_clients({ bufnr = bufnr, name = 'relay' })[1]
end

local function require_client(bufnr)
  local client = M.client(bufnr)
  if not client then
    notify('no relay language server is attached to this buffer (is `' .. M.cmd()[1] .. '` on PATH?)', vim.log.levels.ERROR)
  end
  return client
end

--- Registers the `relay` filetype for *.relay and *.rly.
function M.register_filetype()
  vim.filetype.add({ extension = { relay = 'relay', rly = 'relay' } })
end

--- The command that starts the server.
function M.cmd()
  if M.config.cmd then
    return M.config.cmd
  end
  local cmd = { M.config.server_path, 'lsp' }
  vim.list_extend(cmd, M.config.extra_args or {})
  return cmd
end

local function root_dir(bufnr)
  local markers = M.config.root_markers or {}
  if vim.fs.root then
    return vim.fs.root(bufnr, markers)
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local found = vim.fs.find(markers, { upward = true, path = vim.fs.dirname(name) })[1]
  return found and vim.fs.dirname(found) or nil
end

-- Workspace trust ------------------------------------------------------------------------
-- relay.toml can declare external passes (commands) and on-save pipelines; the server runs
-- none of them until told the workspace is trusted. A relay.toml is trusted when Neovim's
-- trust database (vim.secure, `:trust`) holds it with its current contents, as for .nvim.lua.

--- The relay.toml governing `path` (a file or directory), found upward, or nil.
function M.project_file(path)
  if not path or path == '' then
    return nil
  end
  local dir = vim.fn.isdirectory(path) == 1 and path or vim.fs.dirname(path)
  return vim.fs.find('relay.toml', { upward = true, path = dir })[1]
end

--- Whether `toml` is trusted in vim.secure's database with its current contents. Reads the
--- database directly: vim.secure.read would prompt.
function M.is_trusted(toml)
  if not toml then
    return false
  end
  local real = vim.loop.fs_realpath(toml)
  local db = io.open(vim.fn.stdpath('state') .. '/trust', 'r')
  if not real or not db then
    if db then
      db:close()
    end
    return false
  end
  local hash_in_db
  for line in db:lines() do
    local hash, file = line:match('^(%S+) (.+)$')
    if file == real then
      hash_in_db = hash
    end
  end
  db:close()
  local f = io.open(real, 'rb')
  if not hash_in_db or not f then
    if f then
      f:close()
    end
    return false
  end
  local contents = f:read('*a')
  f:close()
  return hash_in_db == vim.fn.sha256(contents)
end

--- Whether the server for files under `path` may run external commands.
function M.trusted_for(path)
  if M.config.trust ~= nil then
    return M.config.trust == true
  end
  return M.is_trusted(M.project_file(path))
end

-- The trust each client's server was last told, by client id (and by root while starting).
local told_trust = {}
local starting_trust = {}

local function client_notify(client, method, params)
  if has('0.11') then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

--- Tells the server of `bufnr` when the trust of its relay.toml changed (`:trust` since it
--- started); called before each write, so that an on-save pipeline sees the new decision.
function M.sync_trust(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = M.client(bufnr)
  if not client then
    return
  end
  local trusted = M.trusted_for(vim.api.nvim_buf_get_name(bufnr))
  local told = told_trust[client.id]
  if told == nil then
    told = starting_trust[client.config.root_dir or '']
  end
  if told ~= trusted then
    told_trust[client.id] = trusted
    client_notify(client, 'workspace/didChangeConfiguration', { settings = { trusted = trusted } })
  end
end

--- :RelayTrust — marks the buffer's relay.toml as trusted (vim.secure, as `:trust` does) and
--- tells the server.
function M.trust(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local toml = M.project_file(vim.api.nvim_buf_get_name(bufnr))
  if not toml then
    notify('no relay.toml above this file', vim.log.levels.WARN)
    return
  end
  if not (vim.secure and vim.secure.trust) then
    notify('this Neovim has no vim.secure; set trust = true in setup() instead', vim.log.levels.ERROR)
    return
  end
  -- vim.secure trusts what a buffer shows (the user is to have read it), not a path.
  local toml_buf = vim.fn.bufadd(toml)
  local was_loaded = vim.api.nvim_buf_is_loaded(toml_buf)
  vim.fn.bufload(toml_buf)
  local ok, err = vim.secure.trust({ action = 'allow', bufnr = toml_buf })
  if not was_loaded then
    pcall(vim.api.nvim_buf_delete, toml_buf, {})
  end
  if not ok then
    notify('could not trust ' .. toml .. ': ' .. tostring(err), vim.log.levels.ERROR)
    return
  end
  M.sync_trust(bufnr)
end

--- The server configuration, in the shape vim.lsp.config() and vim.lsp.start() take.
function M.lsp_config()
  local init_options = vim.tbl_extend('keep', M.config.init_options or {}, {
    defaultPipeline = M.config.default_pipeline,
    -- The server then offers one "Apply pass…" code action instead of every pass.
    clientCommands = { CLIENT_APPLY_PASS },
  })
  return {
    name = 'relay',
    cmd = M.cmd(),
    filetypes = M.config.filetypes,
    root_markers = M.config.root_markers,
    settings = M.config.settings,
    init_options = init_options,
    capabilities = M.config.capabilities,
    on_attach = M.config.on_attach,
    before_init = function(params, config)
      local trusted = M.trusted_for(config.root_dir)
      starting_trust[config.root_dir or ''] = trusted
      params.initializationOptions = vim.tbl_extend('force', params.initializationOptions or {}, {
        trusted = trusted,
      })
    end,
  }
end

--- Starts (or reuses) the server for `bufnr` with vim.lsp.start.
function M.start(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if vim.bo[bufnr].buftype ~= '' then
    return nil -- scratch buffers such as :RelayPassOutput's
  end
  local config = M.lsp_config()
  config.root_markers = nil
  local name = vim.api.nvim_buf_get_name(bufnr)
  config.root_dir = root_dir(bufnr) or (name ~= '' and vim.fs.dirname(name)) or vim.fn.getcwd()
  return vim.lsp.start(config, { bufnr = bufnr })
end

local function enable_lsp()
  if vim.lsp.config and vim.lsp.enable and not M.config._legacy_start then
    -- Neovim >= 0.11. lsp/relay.lua gives the defaults; this call overrides them.
    local config = M.lsp_config()
    config.name = nil
    vim.lsp.config('relay', config)
    vim.lsp.enable('relay', M.config.autostart ~= false)
    return
  end
  if vim.lsp.enable then
    -- _legacy_start on 0.11+ (tests of the 0.8-0.10 path): undo an earlier vim.lsp.enable.
    pcall(vim.lsp.enable, 'relay', false)
  end
  local group = vim.api.nvim_create_augroup('relay_lsp', { clear = true })
  if M.config.autostart == false then
    return
  end
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = M.config.filetypes,
    callback = function(args)
      M.start(args.buf)
    end,
  })
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(M.config.filetypes, vim.bo[buf].filetype) then
      M.start(buf)
    end
  end
end

--- Stops the server and starts it again for every relay buffer.
function M.restart()
  local clients = get_clients({ name = 'relay' })
  for _, client in ipairs(clients) do
    if has('0.11') then
      client:stop(true)
    else
      client.stop(true)
    end
  end
  vim.defer_fn(function()
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(buf) and vim.tbl_contains(M.config.filetypes, vim.bo[buf].filetype) then
        M.start(buf)
      end
    end
  end, 200)
end

---------------------------------------------------------------------------------------------
-- Passes

--- Accepts ["A", ...], [{name=..., description=..., opt_level=...}, ...] or {passes=...}.
function M._parse_pass_list(value)
  if type(value) == 'table' and value.passes ~= nil then
    value = value.passes
  end
  local out = {}
  if type(value) ~= 'table' then
    return out
  end
  for _, item in ipairs(value) do
    if type(item) == 'string' then
      table.insert(out, { name = item })
    elseif type(item) == 'table' and type(item.name) == 'string' then
      local desc = item.description or item.doc
      table.insert(out, {
        name = item.name,
        description = type(desc) == 'string' and desc or nil,
        opt_level = tonumber(item.opt_level or item.optLevel),
      })
    end
  end
  return out
end

local pass_cache = nil

--- Pass list: `<server> passes --json`, else the server's relay.listPasses command.
function M.list_passes(bufnr)
  if pass_cache and #pass_cache > 0 then
    return pass_cache
  end
  local binary = M.cmd()[1]
  if vim.fn.executable(binary) == 1 then
    local out = vim.fn.system({ binary, 'passes', '--json' })
    if vim.v.shell_error == 0 then
      pass_cache = M._parse_pass_list(json_decode(out))
    end
  end
  if (not pass_cache or #pass_cache == 0) then
    local client = M.client(bufnr)
    if client then
      local resp = client_request_sync(client, 'workspace/executeCommand', {
        command = SERVER_LIST_PASSES,
        arguments = {},
      }, 5000, bufnr)
      if resp and resp.result then
        pass_cache = M._parse_pass_list(resp.result)
      end
    end
  end
  return pass_cache or {}
end

local function complete_passes(arglead)
  local names = {}
  for _, p in ipairs(M.list_passes(0)) do
    if vim.startswith(p.name:lower(), arglead:lower()) then
      table.insert(names, p.name)
    end
  end
  return names
end

local function is_workspace_edit(value)
  return type(value) == 'table' and (value.changes ~= nil or value.documentChanges ~= nil)
end

local function server_has_command(client, name)
  local provider = client.server_capabilities and client.server_capabilities.executeCommandProvider
  local commands = type(provider) == 'table' and provider.commands or {}
  if vim.tbl_contains(commands, name) then
    return true
  end
  -- Dynamic registrations (client/registerCapability).
  local dyn = client.dynamic_capabilities
  local ok, regs = pcall(function()
    return dyn and dyn.get and dyn:get('workspace/executeCommand') or {}
  end)
  if ok and type(regs) == 'table' then
    for _, reg in ipairs(regs) do
      local opts = reg.registerOptions or {}
      if vim.tbl_contains(opts.commands or {}, name) then
        return true
      end
    end
  end
  return false
end

local function execute_command(client, bufnr, command, on_done)
  client_request(client, 'workspace/executeCommand', command, function(err, result)
    if err then
      notify(command.command .. ' failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif is_workspace_edit(result) then
      vim.lsp.util.apply_workspace_edit(result, client.offset_encoding)
    end
    if on_done then
      on_done(err, result)
    end
  end, bufnr)
end

local function apply_code_action(client, bufnr, action, on_done)
  if action.edit then
    vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
  end
  local command = type(action.command) == 'table' and action.command or (type(action.command) == 'string' and action)
  if command then
    execute_command(client, bufnr, { command = command.command, arguments = command.arguments }, on_done)
  elseif on_done then
    on_done(nil, nil)
  end
end

--- Runs `pipeline` (e.g. "InferType, FoldConstant") on `bufnr` and applies the result.
--- Uses workspace/executeCommand relay.applyPipeline {uri, pipeline}; if the server does
--- not offer it, the code action whose title names the pipeline.
function M.apply_pipeline(pipeline, bufnr, on_done)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = require_client(bufnr)
  if not client then
    return
  end
  local uri = vim.uri_from_bufnr(bufnr)
  if server_has_command(client, SERVER_APPLY_PIPELINE) then
    execute_command(client, bufnr, {
      command = SERVER_APPLY_PIPELINE,
      arguments = { { uri = uri, pipeline = pipeline } },
    }, on_done)
    return
  end
  local last = vim.api.nvim_buf_line_count(bufnr)
  local params = {
    textDocument = { uri = uri },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = last, character = 0 } },
    context = { diagnostics = {} },
  }
  client_request(client, 'textDocument/codeAction', params, function(err, actions)
    if err then
      notify('textDocument/codeAction failed: ' .. (err.message or ''), vim.log.levels.ERROR)
      return
    end
    for _, action in ipairs(actions or {}) do
      if action.title and action.title:lower():find(pipeline:lower(), 1, true) then
        local provider = client.server_capabilities.codeActionProvider
        if not action.edit and not action.command and type(provider) == 'table' and provider.resolveProvider then
          client_request(client, 'codeAction/resolve', action, function(rerr, resolved)
            if rerr then
              notify('codeAction/resolve failed: ' .. (rerr.message or ''), vim.log.levels.ERROR)
              return
            end
            apply_code_action(client, bufnr, resolved or action, on_done)
          end, bufnr)
        else
          apply_code_action(client, bufnr, action, on_done)
        end
        return
      end
    end
    notify(('the server offers neither %s nor a code action for "%s"'):format(SERVER_APPLY_PIPELINE, pipeline),
      vim.log.levels.WARN)
  end, bufnr)
end

--- Lets the user pick a pass with vim.ui.select and runs it on `bufnr`. `applicable` (pass
--- names that change the code at the cursor, as the server's "Apply pass…" code action
--- sends them) are listed first.
function M.pick_pass(bufnr, applicable)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local passes = M.list_passes(bufnr)
  if #passes == 0 then
    notify('no pass list available; give the pass name: :RelayApplyPass FoldConstant', vim.log.levels.WARN)
    return
  end
  local changing = {}
  for _, name in ipairs(type(applicable) == 'table' and applicable or {}) do
    changing[name] = true
  end
  local ordered = {}
  for _, p in ipairs(passes) do
    if changing[p.name] then
      table.insert(ordered, p)
    end
  end
  for _, p in ipairs(passes) do
    if not changing[p.name] then
      table.insert(ordered, p)
    end
  end
  vim.ui.select(ordered, {
    prompt = 'Relay pass',
    kind = 'relay_pass',
    format_item = function(p)
      local text = changing[p.name] and (p.name .. ' (changes the code here)') or p.name
      return p.description and (text .. ' — ' .. p.description) or text
    end,
  }, function(choice)
    if choice then
      M.apply_pipeline(choice.name, bufnr)
    end
  end)
end

-- The client side of the server's "Apply pass…" code action.
vim.lsp.commands[CLIENT_APPLY_PASS] = function(command, ctx)
  local arg = command.arguments and command.arguments[1] or {}
  local bufnr = ctx and ctx.bufnr
  if type(arg) == 'table' and type(arg.uri) == 'string' then
    bufnr = vim.uri_to_bufnr(arg.uri)
  end
  M.pick_pass(bufnr, type(arg) == 'table' and arg.applicable or nil)
end

local output_count = 0

local function format_ms(t)
  t = tonumber(t)
  if not t then
    return '?'
  end
  return (t < 10 and '%.2f ms' or '%.1f ms'):format(t)
end

--- Runs relay/passOutput and shows the final stage in a vertical split (scratch buffer,
--- filetype relay); the stages and their times are listed with vim.notify and kept in
--- b:relay_pass_stages of that buffer.
function M.pass_output(pipeline, bufnr, on_done)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = require_client(bufnr)
  if not client then
    return
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, pipeline = pipeline }
  client_request(client, PASS_OUTPUT, params, function(err, result)
    if err then
      notify(PASS_OUTPUT .. ' failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      if on_done then on_done(err) end
      return
    end
    if type(result) ~= 'table' or type(result.stages) ~= 'table' then
      notify('unexpected answer to ' .. PASS_OUTPUT, vim.log.levels.ERROR)
      if on_done then on_done('bad result') end
      return
    end
    local stages = result.stages
    local lines = { ('pipeline %s: %d stage(s)'):format(pipeline, #stages) }
    local summary = {}
    for i, s in ipairs(stages) do
      table.insert(lines, ('%3d. %-32s %10s  %s'):format(i, tostring(s.pass), format_ms(s.timeMs),
        s.changed and 'changed' or 'unchanged'))
      table.insert(summary, { pass = s.pass, timeMs = s.timeMs, changed = s.changed })
    end
    if result.error and result.error ~= vim.NIL then
      table.insert(lines, 'error: ' .. tostring(result.error))
    end
    local failed = result.error and result.error ~= vim.NIL
    vim.notify(table.concat(lines, '\n'), failed and vim.log.levels.ERROR or vim.log.levels.INFO)
    if #stages == 0 then
      if on_done then on_done(result.error) end
      return
    end

    output_count = output_count + 1
    local buf = vim.api.nvim_create_buf(false, true)
    vim.bo[buf].buftype = 'nofile'
    vim.bo[buf].bufhidden = 'wipe'
    vim.bo[buf].swapfile = false
    local base = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ':t')
    pcall(vim.api.nvim_buf_set_name, buf, ('relay-pass-output://%d/%s'):format(output_count, base ~= '' and base or 'module'))
    local text = tostring(stages[#stages].text or '')
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split((text:gsub('\n$', '')), '\n', { plain = true }))
    vim.bo[buf].modifiable = false
    vim.b[buf].relay_pass_stages = summary
    vim.b[buf].relay_pipeline = pipeline
    vim.cmd('vsplit')
    vim.api.nvim_win_set_buf(0, buf)
    vim.bo[buf].filetype = 'relay'
    if on_done then on_done(failed and result.error or nil, buf) end
  end, bufnr)
end

---------------------------------------------------------------------------------------------
-- Setup

local function create_commands()
  vim.api.nvim_create_user_command('RelayApplyPass', function(opts)
    local name = vim.trim(opts.args)
    if name ~= '' then
      M.apply_pipeline(name, 0)
      return
    end
    M.pick_pass(0)
  end, { nargs = '?', complete = complete_passes, desc = 'Run one Relay pass on this buffer' })

  vim.api.nvim_create_user_command('RelayApplyPipeline', function(opts)
    local pipeline = vim.trim(opts.args)
    if pipeline ~= '' then
      M.apply_pipeline(pipeline, 0)
      return
    end
    vim.ui.input({ prompt = 'Relay pipeline: ', default = M.config.default_pipeline }, function(input)
      if input and vim.trim(input) ~= '' then
        M.apply_pipeline(vim.trim(input), 0)
      end
    end)
  end, { nargs = '*', complete = complete_passes, desc = 'Run a Relay pass pipeline on this buffer' })

  vim.api.nvim_create_user_command('RelayPassOutput', function(opts)
    local pipeline = vim.trim(opts.args)
    M.pass_output(pipeline ~= '' and pipeline or M.config.default_pipeline, 0)
  end, { nargs = '*', complete = complete_passes, desc = 'Show a Relay pipeline’s output in a split' })

  vim.api.nvim_create_user_command('RelayTrust', function()
    M.trust(0)
  end, { nargs = 0, desc = 'Trust this project’s relay.toml (lets the server run its external passes)' })

  vim.api.nvim_create_user_command('RelayRestart', function()
    M.restart()
  end, { nargs = 0, desc = 'Restart the Relay language server' })

  require('relay.find_pattern').create_commands()
  require('relay.graph').create_commands()
  require('relay.run').create_commands()
end

--- Tells every running relay server that the project file `path` changed
--- (`workspace/didChangeWatchedFiles`, change type 2).
function M.notify_project_changed(path)
  local uri = vim.uri_from_fname(vim.fn.fnamemodify(path, ':p'))
  for _, client in ipairs(get_clients({ name = 'relay' })) do
    client_notify(client, 'workspace/didChangeWatchedFiles', { changes = { { uri = uri, type = 2 } } })
  end
end

function M.setup(opts)
  opts = opts or {}
  if vim.lsp.config and vim.lsp.enable and not opts._legacy_start then
    pcall(vim.api.nvim_del_augroup_by_name, 'relay_lsp')
  end
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
  local islist = vim.islist or vim.tbl_islist
  for key, value in pairs(opts) do
    if type(value) == 'table' and islist(value) then
      M.config[key] = value -- lists (cmd, filetypes, ...) replace the default, not merge into it
    end
  end
  pass_cache = nil
  M._did_setup = true
  M.register_filetype()
  create_commands()
  -- Neovim watches files for servers only where it can (not on Linux by default): when
  -- relay.toml is written here, tell the server as a file watcher would, so declared
  -- operators, patterns and pipelines apply to open modules at once.
  vim.api.nvim_create_autocmd('BufWritePost', {
    group = vim.api.nvim_create_augroup('relay_project_file', { clear = true }),
    pattern = 'relay.toml',
    callback = function(args)
      M.notify_project_changed(vim.api.nvim_buf_get_name(args.buf))
    end,
  })
  vim.api.nvim_create_autocmd('BufWritePre', {
    group = vim.api.nvim_create_augroup('relay_trust', { clear = true }),
    callback = function(args)
      if vim.tbl_contains(M.config.filetypes, vim.bo[args.buf].filetype) then
        M.sync_trust(args.buf)
      end
    end,
  })
  enable_lsp()
end

return M
