-- Running the program with the server's reference interpreter:
--   :RelayRunFunction [NAME]      runs @NAME (default: the function under the cursor) on seeded
--                                 random inputs (server command relay.runFunction, also the
--                                 command of the "Run with random inputs" code lens) and prints
--                                 the result's shape, dtype and min/max/mean; a run-time error
--                                 is also a diagnostic at the failing expression.
--   :RelayCheckSemantics [PIPELINE]
--                                 runs PIPELINE (default: `default_pipeline` of setup(); a
--                                 relay.toml pipeline name works too) under the semantic check
--                                 (relay.checkSemantics): "the results agree", or the first pass
--                                 that changed the result with the seed, the element, both
--                                 values and the reproducer directory; a diagnostic at the
--                                 function.
-- Code lenses are shown (and refreshed) in relay buffers unless setup({ codelens = false }).
local M = {}

local function relay()
  return require('relay')
end

local function notify(msg, level)
  vim.notify('relay: ' .. msg, level or vim.log.levels.INFO)
end

local function request(client, params, handler, bufnr)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:request('workspace/executeCommand', params, handler, bufnr)
  end
  return client.request('workspace/executeCommand', params, handler, bufnr)
end

local function client_for(bufnr)
  local client = relay().client(bufnr)
  if not client then
    notify('no relay language server is attached to this buffer', vim.log.levels.ERROR)
  end
  return client
end

--- Runs @`name` of `bufnr` on the random inputs of seed 0; `on_done(err, result)`.
function M.run_function(name, bufnr, on_done)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  name = (name and name ~= '') and name:gsub('^@', '') or require('relay.graph').function_at_cursor(bufnr)
  if not name then
    notify('put the cursor in a function, or give its name: :RelayRunFunction NAME', vim.log.levels.ERROR)
    return
  end
  local client = client_for(bufnr)
  if not client then
    return
  end
  local params = {
    command = 'relay.runFunction',
    arguments = { { uri = vim.uri_from_bufnr(bufnr), ['function'] = name, seed = 0 } },
  }
  request(client, params, function(err, result)
    if err then
      notify(('running @%s failed: %s'):format(name, err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif result.error and result.error ~= vim.NIL then
      local at = ''
      local range = result.error.range
      if range and range ~= vim.NIL then
        at = (' (line %d, column %d)'):format(range.start.line + 1, range.start.character + 1)
      end
      notify(('@%s %s: %s%s'):format(name, result.stopped and 'was stopped' or 'failed', result.error.message, at),
        vim.log.levels.ERROR)
    else
      notify(('@%s (seed %d): %s'):format(name, result.seed, result.summary))
    end
    -- The lens title shows the run now (also where the editor does not take the server's
    -- workspace/codeLens/refresh).
    if not err and vim.lsp.codelens and relay().config.codelens ~= false then
      pcall(vim.lsp.codelens.refresh, { bufnr = bufnr })
    end
    if on_done then
      on_done(err, result)
    end
  end, bufnr)
end

--- Checks `pipeline` on `bufnr` (nil/empty: the server's default, or relay.toml's only
--- pipeline); `on_done(err, result)`.
function M.check_semantics(pipeline, bufnr, on_done)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = client_for(bufnr)
  if not client then
    return
  end
  local arg = { uri = vim.uri_from_bufnr(bufnr) }
  if pipeline and vim.trim(pipeline) ~= '' then
    arg.pipeline = vim.trim(pipeline)
  end
  notify('checking the semantics of ' .. (arg.pipeline or 'the default pipeline') .. '…')
  request(client, { command = 'relay.checkSemantics', arguments = { arg } }, function(err, result)
    if err then
      notify('checking pass semantics failed: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif result.difference and result.difference ~= vim.NIL then
      notify(result.difference.message, vim.log.levels.ERROR)
    elseif result.error and result.error ~= vim.NIL then
      notify(result.headline, vim.log.levels.ERROR)
    else
      notify(result.headline)
    end
    if on_done then
      on_done(err, result)
    end
  end, bufnr)
end

--- The client side of the "Run with random inputs" lens: the same as :RelayRunFunction, so
--- the result is printed (the server refreshes the lens, whose title then shows it too).
function M.register_lens_commands()
  vim.lsp.commands['relay.runFunction'] = function(command, ctx)
    local arg = (command.arguments or {})[1] or {}
    M.run_function(arg['function'], ctx.bufnr)
  end
end

--- Shows the code lenses of relay buffers and keeps them current.
function M.enable_codelens()
  local group = vim.api.nvim_create_augroup('relay_codelens', { clear = true })
  if relay().config.codelens == false then
    return
  end
  local function refresh(buf)
    if vim.lsp.codelens and relay().client(buf) then
      pcall(vim.lsp.codelens.refresh, { bufnr = buf })
    end
  end
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == 'relay' then
        refresh(args.buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost' }, {
    group = group,
    callback = function(args)
      if vim.tbl_contains(relay().config.filetypes, vim.bo[args.buf].filetype) then
        refresh(args.buf)
      end
    end,
  })
end

function M.create_commands()
  M.register_lens_commands()
  M.enable_codelens()
  vim.api.nvim_create_user_command('RelayRunFunction', function(opts)
    M.run_function(vim.trim(opts.args), 0)
  end, { nargs = '?', desc = 'Run a Relay function on seeded random inputs' })
  vim.api.nvim_create_user_command('RelayCheckSemantics', function(opts)
    local pipeline = vim.trim(opts.args)
    M.check_semantics(pipeline ~= '' and pipeline or relay().config.default_pipeline, 0)
  end, { nargs = '*', desc = 'Check that a Relay pipeline keeps what the module computes' })
end

return M
