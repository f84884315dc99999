#!/usr/bin/env node
// End-to-end test of the csa-lint VS Code extension in a real browser:
// code-server (VS Code for the browser) with the extension installed from a
// .vsix, driven by headless Chromium through playwright-core.
//
// Run through scripts/editor_e2e.sh --vscode (it builds everything first),
// or by hand from this directory after `npm ci`:
//
//   CSA_LSP=/path/to/csa-lsp CSA_VSIX=/path/to/csa-lint.vsix node run.js
//
// Environment:
//   CSA_LSP            the csa-lsp binary (required)
//   CSA_VSIX           the packaged extension (required)
//   CSA_E2E_ARTIFACTS  where the screenshots go (default: a new temp dir)
//   CSA_E2E_TIMEOUT    seconds for each wait (default 60)
//   CSA_E2E_REQUIRE=1  a reason to skip is a failure instead
//   CHROMIUM           the browser (default /usr/bin/chromium)
//
// Exit status: 0 passed ("PASS: ...") or skipped ("SKIP: <reason>": no
// code-server, no playwright-core, no Chromium, or one of them does not
// start here); 1 failed ("FAIL: <what was missing>", with a screenshot).
'use strict';

const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const http = require('http');
const net = require('net');
const os = require('os');
const path = require('path');

const TIMEOUT_MS = (Number(process.env.CSA_E2E_TIMEOUT) || 60) * 1000;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const started = Date.now();

// The file under test: CSA105 on line 4 (a marker with no loop after it),
// whose first quick fix removes the marker with its #ifdef guard.
const SOURCE = [
  '/* csa-lint editor test: the marker below has no loop to attach to. */',
  'void scale(int *a, int n, int k) {',
  '#ifdef __CSA__',
  '  __builtin_csa_parallel_loop();',
  '#endif',
  '  a[0] = n * k;',
  '}',
  '',
].join('\n');
const EXPECTED_AFTER = [
  '/* csa-lint editor test: the marker below has no loop to attach to. */',
  'void scale(int *a, int n, int k) {',
  '  a[0] = n * k;',
  '}',
  '',
].join('\n');
const FIX_TITLE = 'Remove the parallel_loop marker';

let tmp; // everything of this run but the screenshots
let artifacts;
let codeServer; // the code-server child (leader of its own process group)
let codeServerLog = '';
let browser;
let page;
let step = 'starting';
let leftovers = []; // processes the cleanup had to kill

function log(msg) {
  const t = ((Date.now() - started) / 1000).toFixed(1).padStart(5);
  console.log(`[${t}s] ${msg}`);
}

class Skip extends Error {}

function skip(reason) {
  throw new Skip(reason);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function httpStatus(url) {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.setTimeout(2000, () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

/** Polls `fn` until it returns a truthy value; throws "timed out waiting for WHAT". */
async function waitFor(what, fn, timeoutMs = TIMEOUT_MS) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
    } catch (e) {
      last = undefined;
    }
    if (last) {
      return last;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}`);
    }
    await sleep(250);
  }
}

function resolveModule(name) {
  try {
    return require.resolve(name, { paths: [__dirname] });
  } catch (e) {
    return undefined;
  }
}

function codeServerEntry() {
  const pkg = resolveModule('code-server/package.json');
  if (!pkg) {
    skip('code-server is not installed (npm ci in editors/vscode/e2e failed or was not run)');
  }
  const dir = path.dirname(pkg);
  const version = JSON.parse(fs.readFileSync(pkg, 'utf8')).version;
  // Its postinstall builds VS Code's native modules; without them it cannot serve.
  if (!fs.existsSync(path.join(dir, 'lib/vscode/node_modules'))) {
    skip(`code-server ${version} is installed without its VS Code dependencies (its postinstall failed)`);
  }
  return { entry: path.join(dir, 'out/node/entry.js'), version };
}

function runCodeServerCli(entry, args) {
  const r = spawnSync(process.execPath, [entry, ...args], {
    encoding: 'utf8',
    timeout: TIMEOUT_MS,
    env: codeServerEnv(),
  });
  return r;
}

function codeServerEnv() {
  // Keep code-server's config, data and logs in the temp dir.
  return {
    ...process.env,
    HOME: path.join(tmp, 'home'),
    XDG_CONFIG_HOME: path.join(tmp, 'home/.config'),
    XDG_DATA_HOME: path.join(tmp, 'home/.local/share'),
    XDG_CACHE_HOME: path.join(tmp, 'home/.cache'),
  };
}

function killCodeServer() {
  if (!codeServer || codeServer.exitCode !== null || codeServer.signalCode !== null) {
    return Promise.resolve();
  }
  const group = -codeServer.pid;
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(hard);
      resolve();
    };
    codeServer.once('exit', done);
    const hard = setTimeout(() => {
      try {
        process.kill(group, 'SIGKILL');
      } catch (e) {
        // already gone
      }
      setTimeout(resolve, 500);
    }, 5000);
    try {
      process.kill(group, 'SIGTERM');
    } catch (e) {
      done();
    }
  }).then(async () => {
    // The extension host and csa-lsp end on their own once their parent has:
    // give them a moment, then kill whatever of the group is still there.
    const deadline = Date.now() + 3000;
    while (Date.now() < deadline && processesOfThisRun().length) {
      await sleep(100);
    }
    try {
      process.kill(group, 'SIGKILL');
    } catch (e) {
      // nothing left
    }
  });
}

async function screenshot(name) {
  if (!page) {
    return undefined;
  }
  const file = path.join(artifacts, name);
  try {
    await page.screenshot({ path: file, timeout: 15000 });
    log(`screenshot: ${file}`);
    return file;
  } catch (e) {
    log(`(no screenshot ${name}: ${e.message.split('\n')[0]})`);
    return undefined;
  }
}

/** The text of the editor showing `name`, line by line as Monaco renders it. */
async function editorText(name) {
  return page.evaluate((name) => {
    const editor = [...document.querySelectorAll('.monaco-editor[data-uri]')].find((e) =>
      e.getAttribute('data-uri').endsWith('/' + name),
    );
    if (!editor) {
      return null;
    }
    const lines = [...editor.querySelectorAll('.view-lines .view-line')];
    lines.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top));
    return lines.map((l) => l.textContent.replace(/\u00a0/g, ' ')).join('\n');
  }, name);
}

/** The tail of the extension's output channel ("csa-lint"), as VS Code logged it. */
function extensionLog() {
  const found = [];
  const walk = (dir) => {
    let entries = [];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      return;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        walk(p);
      } else if (/-csa-lint\.log$/.test(e.name)) {
        found.push(p);
      }
    }
  };
  if (tmp) {
    walk(path.join(tmp, 'user-data/logs'));
  }
  return found
    .map((f) => fs.readFileSync(f, 'utf8').split('\n').slice(-40).join('\n'))
    .join('\n')
    .trim();
}

async function visibleNotifications() {
  if (!page) {
    return [];
  }
  try {
    return await page.$$eval('.notification-list-item-message', (els) =>
      els.map((e) => e.textContent.trim()).filter(Boolean),
    );
  } catch (e) {
    return [];
  }
}

async function main() {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'csa-vscode-e2e-'));
  artifacts = process.env.CSA_E2E_ARTIFACTS || fs.mkdtempSync(path.join(os.tmpdir(), 'csa-vscode-e2e-artifacts-'));
  fs.mkdirSync(artifacts, { recursive: true });
  log(`artifacts: ${artifacts}`);

  const lsp = process.env.CSA_LSP;
  const vsix = process.env.CSA_VSIX;
  if (!lsp || !fs.existsSync(lsp)) {
    throw new Error(`CSA_LSP must name the csa-lsp binary (got ${JSON.stringify(lsp)})`);
  }
  if (!vsix || !fs.existsSync(vsix)) {
    throw new Error(`CSA_VSIX must name the packaged extension (got ${JSON.stringify(vsix)})`);
  }
  const { entry, version } = codeServerEntry();
  const pwPath = resolveModule('playwright-core');
  if (!pwPath) {
    skip('playwright-core is not installed (npm ci in editors/vscode/e2e)');
  }
  if (!fs.existsSync(CHROMIUM)) {
    skip(`no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM)`);
  }
  const { chromium } = require(pwPath);
  const pwVersion = JSON.parse(fs.readFileSync(path.join(path.dirname(pwPath), 'package.json'), 'utf8')).version;

  // The user data: settings pointing the extension at the server under test.
  const userData = path.join(tmp, 'user-data');
  const extensions = path.join(tmp, 'extensions');
  const workspace = path.join(tmp, 'workspace');
  for (const d of [path.join(userData, 'User'), extensions, workspace, path.join(tmp, 'home')]) {
    fs.mkdirSync(d, { recursive: true });
  }
  fs.writeFileSync(
    path.join(userData, 'User/settings.json'),
    JSON.stringify(
      {
        'csa-lint.server.path': path.resolve(lsp),
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'workbench.enableExperiments': false,
        'security.workspace.trust.enabled': false,
        'telemetry.telemetryLevel': 'off',
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'extensions.ignoreRecommendations': true,
        'update.mode': 'none',
        'git.enabled': false,
        'files.autoSave': 'off',
        'editor.minimap.enabled': false,
        'editor.hover.delay': 300,
        'chat.commandCenter.enabled': false,
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
      },
      null,
      2,
    ),
  );
  const file = path.join(workspace, 'scale.c');
  fs.writeFileSync(file, SOURCE);

  step = 'installing the extension into code-server';
  const inst = runCodeServerCli(entry, [
    '--user-data-dir', userData,
    '--extensions-dir', extensions,
    '--install-extension', path.resolve(vsix),
  ]);
  if (inst.error) {
    skip(`code-server ${version} does not run here: ${inst.error.message}`);
  }
  if (inst.status !== 0) {
    throw new Error(`code-server --install-extension exited ${inst.status}:\n${inst.stdout}${inst.stderr}`);
  }
  const installed = fs.readdirSync(extensions).filter((d) => d.startsWith('csa-lint.csa-lint-'));
  if (installed.length !== 1) {
    throw new Error(`the extension is not in ${extensions} after --install-extension:\n${inst.stdout}${inst.stderr}`);
  }
  log(`code-server ${version}: installed ${installed[0]} from ${vsix}`);

  step = 'starting code-server';
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  codeServer = spawn(
    process.execPath,
    [
      entry,
      '--bind-addr', `127.0.0.1:${port}`,
      '--auth', 'none',
      '--user-data-dir', userData,
      '--extensions-dir', extensions,
      '--config', path.join(tmp, 'code-server.yaml'),
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--ignore-last-opened',
      workspace,
    ],
    { env: codeServerEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const collect = (chunk) => {
    codeServerLog += chunk.toString();
    if (codeServerLog.length > 200000) {
      codeServerLog = codeServerLog.slice(-100000);
    }
  };
  codeServer.stdout.on('data', collect);
  codeServer.stderr.on('data', collect);
  await waitFor(`code-server to answer on ${url}/healthz`, async () => {
    if (codeServer.exitCode !== null || codeServer.signalCode !== null) {
      skip(`code-server ${version} exited at start (${codeServer.exitCode ?? codeServer.signalCode}):\n${codeServerLog}`);
    }
    return (await httpStatus(`${url}/healthz`)) === 200;
  });
  log(`code-server listens on ${url} (pid ${codeServer.pid})`);

  step = 'starting Chromium';
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      chromiumSandbox: false, // root in a container: no user namespaces for the sandbox
      args: ['--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
      timeout: TIMEOUT_MS,
    });
  } catch (e) {
    skip(`${CHROMIUM} does not start under playwright-core ${pwVersion}: ${e.message.split('\n').slice(0, 6).join(' | ')}`);
  }
  log(`Chromium ${browser.version()} (playwright-core ${pwVersion})`);
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(TIMEOUT_MS);
  page = await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));

  step = 'loading the workbench';
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`, { timeout: TIMEOUT_MS });
  await page.waitForSelector('.monaco-workbench', { timeout: TIMEOUT_MS });
  await waitFor('the Explorer to list scale.c', () =>
    page.$('.explorer-folders-view .monaco-list-row[aria-label*="scale.c"], .explorer-folders-view .label-name:text-is("scale.c")'),
  );
  log('workbench loaded');

  step = 'opening scale.c';
  // Quick Open, as a person would: Ctrl+P, the name, Enter.
  await waitFor('Quick Open to show', async () => {
    await page.keyboard.press('Control+P');
    return page.waitForSelector('.quick-input-widget .quick-input-box input', { state: 'visible', timeout: 3000 });
  });
  await page.keyboard.type('scale.c');
  await waitFor('Quick Open to list scale.c', () =>
    page.$('.quick-input-list .monaco-list-row[aria-label*="scale.c"]'),
  );
  await page.keyboard.press('Enter');
  await waitFor('the editor to show scale.c', async () => {
    const text = await editorText('scale.c');
    return text && text.includes('__builtin_csa_parallel_loop');
  });
  log('scale.c is open');

  step = 'waiting for the CSA105 squiggle';
  const squiggle = await waitFor('a warning squiggle (.squiggly-warning) in the editor of scale.c', async () => {
    const notes = await visibleNotifications();
    const bad = notes.find((n) => /csa-lint/i.test(n));
    if (bad) {
      throw new Error(`the extension reports: ${bad}`);
    }
    return page.$('.monaco-editor[data-uri$="/scale.c"] .squiggly-warning');
  }).catch(async (e) => {
    const notes = await visibleNotifications();
    throw new Error(`${e.message}${notes.length ? `; notifications: ${notes.join(' | ')}` : ''}`);
  });
  const box = await waitFor('the squiggle to have a size', async () => {
    const b = await squiggle.boundingBox();
    return b && b.width > 0 ? b : undefined;
  });
  log(`squiggle at x=${Math.round(box.x)} y=${Math.round(box.y)} width=${Math.round(box.width)}`);
  const shot1 = await screenshot('1-squiggle.png');

  // The Problems panel lists it with its code.
  step = 'opening the Problems panel';
  const problem = await waitFor('the Problems panel (Ctrl+Shift+M) to list CSA105', async () => {
    if (!(await page.$('.markers-panel'))) {
      await page.keyboard.press('Control+Shift+M');
      await page.waitForSelector('.markers-panel', { state: 'visible', timeout: 3000 });
    }
    const rows = await page.$$eval('.markers-panel .monaco-list-row', (els) => els.map((e) => e.textContent));
    return rows.find((t) => t.includes('CSA105'));
  });
  log(`Problems: ${problem.replace(/\s+/g, ' ').slice(0, 160)}`);

  // Which diagnostic the squiggle is: the hover over it names the code.
  step = 'hovering the squiggle';
  const cx = box.x + Math.min(box.width / 2, 60);
  const cy = box.y + box.height / 2;
  const hover = await waitFor('a hover naming CSA105 over the squiggle', async () => {
    await page.mouse.move(cx, cy - 4);
    await page.mouse.move(cx, cy);
    await sleep(800);
    const texts = await page.$$eval('.monaco-hover', (els) =>
      els.filter((e) => e.offsetParent !== null).map((e) => e.textContent),
    );
    return texts.find((t) => t.includes('CSA105'));
  });
  if (!/not attached to any loop/.test(hover)) {
    throw new Error(`the hover names CSA105 but not its message: ${hover}`);
  }
  log(`hover: ${hover.replace(/\s+/g, ' ').slice(0, 160)}`);
  const shot2 = await screenshot('2-hover.png');

  step = 'opening the quick fix menu';
  await page.mouse.click(cx, cy); // the cursor on the marker
  await page.keyboard.press('Escape');
  const rows = await waitFor('the quick fix menu (Ctrl+.) to list the fixes', async () => {
    if (!(await page.$('.action-widget .monaco-list-row'))) {
      await page.keyboard.press('Control+Period');
      await page.waitForSelector('.action-widget .monaco-list-row', { state: 'visible', timeout: 3000 });
    }
    const titles = await page.$$eval('.action-widget .monaco-list-row', (els) =>
      els.map((e) => e.textContent.trim()),
    );
    return titles.some((t) => t.startsWith(FIX_TITLE)) ? titles : undefined;
  });
  log(`quick fixes: ${JSON.stringify(rows)}`);
  const shot3 = await screenshot('3-quick-fix-menu.png');

  step = `applying "${FIX_TITLE}"`;
  // With the keyboard, as after Ctrl+. (the menu puts a pointer block over
  // the editor, so a synthetic click may not reach the row): down to the
  // fix, then Enter.
  await waitFor(`"${FIX_TITLE}" to be the focused row`, async () => {
    const focused = await page.$eval('.action-widget .monaco-list-row.focused', (e) => e.textContent.trim());
    if (focused.startsWith(FIX_TITLE)) {
      return true;
    }
    await page.keyboard.press('ArrowDown');
    return false;
  }, 10000);
  await page.keyboard.press('Enter');
  await waitFor('the marker to leave the editor', async () => {
    const text = await editorText('scale.c');
    return text !== null && !text.includes('parallel_loop') && text.includes('a[0] = n * k;');
  });
  await waitFor('the squiggle to go', async () => !(await page.$('.monaco-editor[data-uri$="/scale.c"] .squiggly-warning')));
  log('the fix is applied in the editor and the squiggle is gone');

  step = 'saving';
  await page.keyboard.press('Control+S');
  const saved = await waitFor('scale.c to be saved with the fix', () => {
    const text = fs.readFileSync(file, 'utf8');
    return text !== SOURCE ? text : undefined;
  });
  if (saved !== EXPECTED_AFTER) {
    throw new Error(`scale.c after the fix is\n${saved}\nexpected\n${EXPECTED_AFTER}`);
  }
  log('scale.c on disk: the marker and its #ifdef __CSA__ / #endif removed, nothing else changed');
  const shot4 = await screenshot('4-fixed.png');
  if (pageErrors.length) {
    log(`(page errors, not fatal: ${pageErrors.slice(0, 3).join(' | ')})`);
  }
  return [shot1, shot2, shot3, shot4].filter(Boolean);
}

// Every process this run starts (code-server, its extension host, csa-lsp,
// Chromium) inherits this variable; after the cleanup none may be left.
const RUN_ID = `${process.pid}-${Date.now()}`;
process.env.CSA_E2E_RUN = RUN_ID;

function processesOfThisRun() {
  const found = [];
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) {
      continue;
    }
    try {
      const env = fs.readFileSync(`/proc/${pid}/environ`, 'latin1');
      if (env.split('\0').includes(`CSA_E2E_RUN=${RUN_ID}`)) {
        const comm = fs.readFileSync(`/proc/${pid}/comm`, 'latin1').trim();
        found.push({ pid: Number(pid), comm });
      }
    } catch (e) {
      // gone, a zombie, or not ours to read
    }
  }
  return found;
}

/** Waits for the run's processes to end; kills and names any that do not. */
async function reapLeftovers() {
  if (!fs.existsSync('/proc/self/environ')) {
    return [];
  }
  const deadline = Date.now() + 5000;
  let left = processesOfThisRun();
  while (left.length && Date.now() < deadline) {
    await sleep(200);
    left = processesOfThisRun();
  }
  for (const p of left) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch (e) {
      // already gone
    }
  }
  return left;
}

async function cleanup() {
  if (browser) {
    await Promise.race([browser.close().catch(() => {}), sleep(10000)]);
  }
  await killCodeServer();
  const left = await reapLeftovers();
  if (left.length) {
    leftovers = left;
  }
  if (tmp && !process.env.CSA_E2E_KEEP) {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    if (interrupted) {
      return;
    }
    interrupted = true;
    console.log(`FAIL: interrupted by ${sig} while ${step}`);
    cleanup().finally(() => process.exit(1));
  });
}

const guard = setTimeout(() => {
  console.log(`FAIL: the whole test took over ${(TIMEOUT_MS * 8) / 1000}s (while ${step})`);
  screenshot('failure.png').finally(() => cleanup().finally(() => process.exit(1)));
}, TIMEOUT_MS * 8);

main()
  .then(async (shots) => {
    clearTimeout(guard);
    await cleanup();
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    if (leftovers.length) {
      console.log(`FAIL: processes outlived the cleanup (killed now): ${leftovers.map((p) => `${p.pid} ${p.comm}`).join(', ')}`);
      process.exit(1);
    }
    log('no process of this run is left');
    console.log(`PASS: VS Code (code-server) showed CSA105, applied "${FIX_TITLE}" and saved the file, in ${secs}s`);
    for (const s of shots) {
      console.log(`  ${s}`);
    }
    process.exit(0);
  })
  .catch(async (e) => {
    clearTimeout(guard);
    if (e instanceof Skip) {
      await cleanup();
      if (process.env.CSA_E2E_REQUIRE === '1') {
        console.log(`FAIL: would skip, but CSA_E2E_REQUIRE=1: ${e.message}`);
        process.exit(1);
      }
      console.log(`SKIP: ${e.message}`);
      process.exit(0);
    }
    const shot = await screenshot('failure.png');
    const notes = await visibleNotifications();
    const clientLog = extensionLog();
    await cleanup();
    console.log(`FAIL: ${step}: ${e.message}`);
    if (notes.length) {
      console.log(`notifications: ${notes.join(' | ')}`);
    }
    if (shot) {
      console.log(`screenshot at failure: ${shot}`);
    }
    if (clientLog) {
      console.log('---- the "csa-lint" output channel (tail) ----');
      console.log(clientLog);
    }
    if (codeServerLog) {
      console.log('---- code-server log (tail) ----');
      console.log(codeServerLog.slice(-4000));
    }
    process.exit(1);
  });
