-- "Find pattern": asks the server (workspace/executeCommand relay.findPattern {uri, pattern})
-- for every match of a dataflow pattern (docs/patterns.md) in the buffer, highlights the
-- matches (RelayPatternMatch) and the other matched expressions (RelayPatternPart), and lists
-- them in the quickfix list. :RelayFindPattern [pattern] (prompts without one);
-- :RelayFindPatternClear removes the highlights.
local M = {}

M.namespace = vim.api.nvim_create_namespace('relay_find_pattern')

vim.api.nvim_set_hl(0, 'RelayPatternMatch', { default = true, link = 'Search' })
vim.api.nvim_set_hl(0, 'RelayPatternPart', { default = true, link = 'Visual' })

local function request(client, params, handler, bufnr)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:request('workspace/executeCommand', params, handler, bufnr)
  end
  return client.request('workspace/executeCommand', params, handler, bufnr)
end

--- Removes the highlights of the last search in `bufnr`.
function M.clear(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  vim.api.nvim_buf_clear_namespace(bufnr, M.namespace, 0, -1)
end

-- LSP range -> (0-based row, byte column) pairs in the client's encoding.
local function byte_range(bufnr, range, encoding)
  local function pos(p)
    local line = vim.api.nvim_buf_get_lines(bufnr, p.line, p.line + 1, false)[1] or ''
    local col = p.character
    if encoding ~= 'utf-8' then
      local ok, byte = pcall(vim.str_byteindex, line, col, encoding == 'utf-16')
      col = ok and byte or col
    end
    return p.line, col
  end
  local sr, sc = pos(range.start)
  local er, ec = pos(range['end'])
  return sr, sc, er, ec
end

local function highlight(bufnr, range, group, encoding)
  local sr, sc, er, ec = byte_range(bufnr, range, encoding)
  vim.api.nvim_buf_set_extmark(bufnr, M.namespace, sr, sc, { end_row = er, end_col = ec, hl_group = group })
end

--- Highlights `result.matches` in `bufnr` and puts them in the quickfix list; returns the
--- quickfix items.
function M.show(bufnr, pattern, result, encoding)
  M.clear(bufnr)
  local items = {}
  for _, m in ipairs((result or {}).matches or {}) do
    for _, part in ipairs(m.parts or {}) do
      highlight(bufnr, part, 'RelayPatternPart', encoding)
    end
    highlight(bufnr, m.range, 'RelayPatternMatch', encoding)
    local sr, sc = byte_range(bufnr, m.range, encoding)
    local line = vim.api.nvim_buf_get_lines(bufnr, sr, sr + 1, false)[1] or ''
    table.insert(items, {
      bufnr = bufnr,
      lnum = sr + 1,
      col = sc + 1,
      text = '@' .. (m['function'] or '?') .. ': ' .. vim.trim(line),
    })
  end
  vim.fn.setqflist({}, ' ', { title = 'Relay pattern: ' .. pattern, items = items })
  return items
end

--- Finds `pattern` in `bufnr`; `on_done(err, items)` is called when the answer is shown.
function M.find(pattern, bufnr, on_done)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = require('relay').client(bufnr)
  if not client then
    vim.notify('relay: no relay language server is attached to this buffer', vim.log.levels.ERROR)
    return
  end
  local params = {
    command = 'relay.findPattern',
    arguments = { { uri = vim.uri_from_bufnr(bufnr), pattern = pattern } },
  }
  request(client, params, function(err, result)
    if err then
      -- The message shows the pattern with carets under the problem.
      vim.notify('relay: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      if on_done then
        on_done(err, nil)
      end
      return
    end
    local items = M.show(bufnr, pattern, result, client.offset_encoding or 'utf-16')
    if #items == 0 then
      vim.notify('relay: no match for ' .. pattern, vim.log.levels.INFO)
    else
      vim.cmd('botright copen')
      vim.cmd('wincmd p')
    end
    if on_done then
      on_done(nil, items)
    end
  end, bufnr)
end

function M.create_commands()
  vim.api.nvim_create_user_command('RelayFindPattern', function(opts)
    local pattern = vim.trim(opts.args)
    if pattern ~= '' then
      M.last = pattern
      M.find(pattern, 0)
      return
    end
    vim.ui.input({ prompt = 'Relay pattern: ', default = M.last }, function(input)
      if input and vim.trim(input) ~= '' then
        M.last = vim.trim(input)
        M.find(M.last, 0)
      end
    end)
  end, { nargs = '*', desc = 'Highlight and list the matches of a dataflow pattern' })
  vim.api.nvim_create_user_command('RelayFindPatternClear', function()
    M.clear(0)
  end, { nargs = 0, desc = 'Remove the highlights of :RelayFindPattern' })
end

return M
