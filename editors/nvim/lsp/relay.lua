-- Neovim >= 0.11 reads this file for vim.lsp.config('relay') / vim.lsp.enable('relay').
-- require('relay').setup({...}) overrides these values with vim.lsp.config().
local ok, relay = pcall(require, 'relay')
if ok then
  local config = relay.lsp_config()
  config.name = nil
  return config
end
return {
  cmd = { 'relay', 'lsp' },
  filetypes = { 'relay' },
  root_markers = { '.git', 'Cargo.toml' },
}
