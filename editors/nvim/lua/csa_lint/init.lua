-- csa-lint for Neovim: starts the `csa-lsp` language server for C and
-- Fortran buffers.
--
--   require('csa_lint').setup({
--     cmd = { 'csa-lsp' },          -- the server and its arguments
--     filetypes = { 'c', 'fortran' },
--     settings = { ignore = { 'CSA208' } },  -- see README "Editors"
--   })
--
-- Works on Neovim 0.7 (vim.lsp.start_client) and later (vim.lsp.start).
-- On 0.11 and later you can instead use the `lsp/csa_lsp.lua` config this
-- plugin ships: `vim.lsp.enable('csa_lsp')`.

local M = {}

M.defaults = {
  cmd = { 'csa-lsp' },
  filetypes = { 'c', 'fortran' },
  root_markers = { 'csa-lint.toml', '.csa-lint.toml', '.git' },
  settings = {},
}

local config = vim.deepcopy(M.defaults)
-- Neovim 0.7 has no vim.lsp.start: one client per root directory.
local clients_by_root = {}

local function find_root(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = name ~= '' and vim.fn.fnamemodify(name, ':p:h') or vim.fn.getcwd()
  while dir and dir ~= '' do
    for _, marker in ipairs(config.root_markers) do
      if vim.loop.fs_stat(dir .. '/' .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      break
    end
    dir = parent
  end
  return vim.fn.getcwd()
end

--- The client configuration for a buffer.
function M.client_config(bufnr)
  return {
    name = 'csa-lsp',
    cmd = config.cmd,
    root_dir = find_root(bufnr),
    init_options = config.settings,
    settings = { ['csa-lint'] = config.settings },
  }
end

--- Starts (or reuses) the server for a buffer.
function M.attach(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  if vim.fn.executable(config.cmd[1]) ~= 1 then
    vim.notify_once(
      'csa-lint: `' .. config.cmd[1] .. '` is not executable; install csa-lsp or set cmd in setup()',
      vim.log.levels.ERROR
    )
    return
  end
  local cfg = M.client_config(bufnr)
  if vim.lsp.start then
    return vim.lsp.start(cfg, { bufnr = bufnr })
  end
  local id = clients_by_root[cfg.root_dir]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(cfg)
    clients_by_root[cfg.root_dir] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

local function attach_open_buffers()
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr)
      and vim.tbl_contains(config.filetypes, vim.bo[bufnr].filetype) then
      M.attach(bufnr)
    end
  end
end

function M.setup(opts)
  config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  local group = vim.api.nvim_create_augroup('csa_lint', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = config.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  -- Buffers already open when setup() runs.
  attach_open_buffers()
  vim.api.nvim_create_user_command('CsaLintRestart', function()
    local get_clients = vim.lsp.get_clients or vim.lsp.get_active_clients
    for _, client in pairs(get_clients()) do
      if client.name == 'csa-lsp' then
        client.stop()
      end
    end
    clients_by_root = {}
    vim.defer_fn(attach_open_buffers, 200)
  end, { desc = 'Restart the csa-lint language server' })
end

return M
