-- Loaded at startup when editors/nvim is on 'runtimepath' (plugin managers do that).
-- Registers the filetype and, unless the user calls require('relay').setup() themselves
-- (before plugins load, e.g. in init.lua) or sets vim.g.relay_no_auto_setup, sets the
-- plugin up with its defaults.
if vim.g.loaded_relay then
  return
end
vim.g.loaded_relay = 1

if vim.fn.has('nvim-0.8') ~= 1 then
  vim.notify('relay.nvim needs Neovim 0.8 or later', vim.log.levels.WARN)
  return
end

local relay = require('relay')
relay.register_filetype()
if not relay._did_setup and not vim.g.relay_no_auto_setup then
  relay.setup()
end
