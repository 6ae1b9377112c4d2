-- Graph views of the Relay language server (relay/graph) and pass diffs:
--   :RelayGraph [NAME]       the dataflow graph of @NAME (default: the function under the cursor,
--                            else @main) written as SVG; opened with the system viewer
--                            (vim.ui.open) unless `graph_open = false` in setup(), and the
--                            path is printed either way.
--   :RelayPassDiff N [PIPELINE]  the text of stage N of the pipeline (default: the plugin's
--                            default_pipeline) against stage N-1 (or the input for N = 1), as
--                            a diff in a new tab.
local M = {}

local GRAPH = 'relay/graph'
local PASS_OUTPUT = 'relay/passOutput'

local function relay()
  return require('relay')
end

local function notify(msg, level)
  vim.notify('relay: ' .. msg, level or vim.log.levels.INFO)
end

--- The global function whose `def` holds the cursor, if any.
function M.function_at_cursor(bufnr)
  local row = vim.api.nvim_win_get_cursor(0)[1]
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, row, false)
  for i = #lines, 1, -1 do
    local name = lines[i]:match('^%s*def%s+@([%w_%.]+)')
    if name then
      return name
    end
  end
  return nil
end

-- Neovim 0.11 deprecates client.request for client:request.
local function request(client, method, params, handler, bufnr)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

local function scratch(name, lines)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, buf, name)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  return buf
end

local function text_lines(text)
  return vim.split((tostring(text or ''):gsub('\n$', '')), '\n', { plain = true })
end

--- Asks for the graph and writes its SVG; `on_done(err, path, result)`.
function M.graph(name, bufnr, on_done)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = relay().client(bufnr)
  if not client then
    notify('the language server is not running', vim.log.levels.ERROR)
    return
  end
  name = (name and name ~= '') and name or M.function_at_cursor(bufnr)
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, ['function'] = name }
  request(client, GRAPH, params, function(err, result)
    if err or type(result) ~= 'table' then
      notify(GRAPH .. ' failed: ' .. (err and err.message or 'no answer'), vim.log.levels.ERROR)
      if on_done then on_done(err or 'no answer') end
      return
    end
    if result.error and result.error ~= vim.NIL then
      notify(tostring(result.error), vim.log.levels.ERROR)
      if on_done then on_done(result.error) end
      return
    end
    local dir = relay().config.graph_dir or vim.fn.fnamemodify(vim.fn.tempname(), ':h')
    local path = ('%s/%s.svg'):format(dir, result['function'])
    local f, open_err = io.open(path, 'w')
    if not f then
      notify('cannot write ' .. path .. ': ' .. tostring(open_err), vim.log.levels.ERROR)
      if on_done then on_done(open_err) end
      return
    end
    f:write(result.svg)
    f:close()
    notify(('graph of @%s: %s'):format(result['function'], path))
    if relay().config.graph_open ~= false and vim.ui.open then
      vim.ui.open(path)
    end
    if on_done then on_done(nil, path, result) end
  end, bufnr)
end

--- Shows stage `n` (1-based) of `pipeline` against the stage before, as a diff in a new tab;
--- `on_done(err, before_buf, after_buf)`.
function M.pass_diff(n, pipeline, bufnr, on_done)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = relay().client(bufnr)
  if not client then
    notify('the language server is not running', vim.log.levels.ERROR)
    return
  end
  local source_lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, pipeline = pipeline }
  request(client, PASS_OUTPUT, params, function(err, result)
    local stages = type(result) == 'table' and result.stages or nil
    if err or type(stages) ~= 'table' then
      notify(PASS_OUTPUT .. ' failed: ' .. (err and err.message or 'no answer'), vim.log.levels.ERROR)
      if on_done then on_done(err or 'no answer') end
      return
    end
    if n < 1 or n > #stages then
      notify(('the pipeline has %d stage(s); no stage %d'):format(#stages, n), vim.log.levels.ERROR)
      if on_done then on_done('no such stage') end
      return
    end
    local before = n == 1 and source_lines or text_lines(stages[n - 1].text)
    local after = text_lines(stages[n].text)
    local label = tostring(stages[n].pass)
    vim.cmd('tabnew')
    local before_buf = scratch(('relay-pass-diff://%d/before-%s'):format(n, label), before)
    vim.api.nvim_win_set_buf(0, before_buf)
    vim.bo[before_buf].filetype = 'relay'
    vim.cmd('diffthis')
    vim.cmd('vsplit')
    local after_buf = scratch(('relay-pass-diff://%d/after-%s'):format(n, label), after)
    vim.api.nvim_win_set_buf(0, after_buf)
    vim.bo[after_buf].filetype = 'relay'
    vim.cmd('diffthis')
    notify(('stage %d: %s (%s)'):format(n, label, stages[n].changed and 'changed' or 'unchanged'))
    if on_done then on_done(nil, before_buf, after_buf) end
  end, bufnr)
end

--- The client commands of the server's code lenses: "Graph" draws the function, "Run
--- pipeline ▸ P" shows the pipeline's output (:RelayPassOutput).
function M.register_lens_commands()
  vim.lsp.commands['relay.showGraph'] = function(command, ctx)
    local arg = (command.arguments or {})[1] or {}
    M.graph(arg['function'], ctx.bufnr)
  end
  vim.lsp.commands['relay.pipelineExplorer'] = function(command, ctx)
    local arg = (command.arguments or {})[1] or {}
    relay().pass_output(arg.pipeline or relay().config.default_pipeline, ctx.bufnr)
  end
end

function M.create_commands()
  M.register_lens_commands()
  vim.api.nvim_create_user_command('RelayGraph', function(opts)
    M.graph(vim.trim(opts.args), 0)
  end, { nargs = '?', desc = 'Draw the dataflow graph of a Relay function as SVG' })
  vim.api.nvim_create_user_command('RelayPassDiff', function(opts)
    local n, rest = opts.args:match('^%s*(%d+)%s*(.*)$')
    if not n then
      notify('usage: :RelayPassDiff N [PIPELINE]', vim.log.levels.ERROR)
      return
    end
    local pipeline = vim.trim(rest or '')
    M.pass_diff(tonumber(n), pipeline ~= '' and pipeline or relay().config.default_pipeline, 0)
  end, { nargs = '+', desc = 'Diff stage N of a Relay pipeline against the stage before' })
end

return M
