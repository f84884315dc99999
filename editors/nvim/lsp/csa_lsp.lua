-- Neovim 0.11+: `vim.lsp.enable('csa_lsp')` with this plugin on the
-- runtimepath. Override fields with vim.lsp.config('csa_lsp', { ... }).
return {
  cmd = { 'csa-lsp' },
  filetypes = { 'c', 'fortran' },
  root_markers = { 'csa-lint.toml', '.csa-lint.toml', '.git' },
  init_options = {},
  settings = { ['csa-lint'] = {} },
}
