-- Headless Neovim test driver (run by server/tests/nvim.rs).
-- Environment: CSA_LSP (server binary), CSA_PLUGIN (editors/nvim),
-- CSA_FILES (colon-separated files to open), CSA_OUT (JSON result file).
vim.opt.runtimepath:prepend(os.getenv('CSA_PLUGIN'))
vim.cmd('filetype on')
require('csa_lint').setup({ cmd = { os.getenv('CSA_LSP') } })

local result = { files = {}, errors = {} }
local function fail(msg)
  table.insert(result.errors, msg)
end

local files = vim.split(os.getenv('CSA_FILES'), ':', { plain = true })
for _, file in ipairs(files) do
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  local ok = vim.wait(30000, function()
    return #vim.diagnostic.get(bufnr) > 0
  end, 50)
  local entry = { file = file, filetype = vim.bo[bufnr].filetype, diagnostics = {} }
  if not ok then
    fail('no diagnostics for ' .. file)
  end
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local code = d.code
    if code == nil and d.user_data and d.user_data.lsp then
      code = d.user_data.lsp.code
    end
    table.insert(entry.diagnostics, {
      line = d.lnum + 1,
      col = d.col + 1,
      code = code,
      source = d.source,
      message = d.message,
    })
  end
  table.insert(result.files, entry)
end

-- A code action on the first file: the first quickfix with an edit, applied.
local first = vim.fn.bufnr(files[1])
vim.api.nvim_set_current_buf(first)
local get_clients = vim.lsp.get_clients or vim.lsp.get_active_clients
local client
for _, c in pairs(get_clients()) do
  if c.name == 'csa-lsp' then
    client = c
  end
end
if client then
  local diags = vim.diagnostic.get(first)
  -- The diagnostics in LSP form (built from vim.diagnostic's fields, which
  -- every version has; an empty Lua table would encode as an object).
  local lsp_diags = {}
  for _, d in ipairs(diags) do
    table.insert(lsp_diags, {
      range = {
        start = { line = d.lnum, character = d.col },
        ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
      },
      message = d.message,
      code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code),
      source = d.source,
    })
  end
  -- Hover on the marker (line 3), rendered the way the hover window does.
  local hover = vim.lsp.buf_request_sync(first, 'textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(first) },
    position = { line = 2, character = 6 },
  }, 30000) or {}
  for _, resp in pairs(hover) do
    if resp.err then
      fail('hover failed: ' .. vim.inspect(resp.err))
    elseif resp.result then
      local lines = vim.lsp.util.convert_input_to_markdown_lines(resp.result.contents)
      lines = vim.lsp.util.trim_empty_lines(lines)
      local scratch = vim.api.nvim_create_buf(false, true)
      result.hover = vim.lsp.util.stylize_markdown(scratch, lines, {})
    end
  end
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(first) },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = vim.api.nvim_buf_line_count(first), character = 0 } },
    context = { diagnostics = lsp_diags, only = { 'quickfix' } },
  }
  local responses = vim.lsp.buf_request_sync(first, 'textDocument/codeAction', params, 30000) or {}
  local titles = {}
  local applied
  for _, resp in pairs(responses) do
    if resp.err then
      fail('codeAction failed: ' .. vim.inspect(resp.err))
    end
    for _, action in ipairs(resp.result or {}) do
      table.insert(titles, action.title)
      if not applied and action.edit and not action.disabled then
        vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding or 'utf-16')
        applied = action.title
      end
    end
  end
  result.actions = titles
  result.applied = applied
  result.after = vim.api.nvim_buf_get_lines(first, 0, -1, false)
else
  fail('no csa-lsp client')
end

local f = io.open(os.getenv('CSA_OUT'), 'w')
f:write(vim.fn.json_encode(result))
f:close()
vim.cmd('qall!')
