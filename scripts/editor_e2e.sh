#!/usr/bin/env bash
# Editor end-to-end tests: csa-lsp inside real editors. Slow (the VS Code
# one builds code-server's native modules on its first run), so it is not
# part of `cargo test` or .ci/run; run it by hand:
#
#   scripts/editor_e2e.sh            # both
#   scripts/editor_e2e.sh --vscode   # VS Code (code-server + headless Chromium)
#   scripts/editor_e2e.sh --emacs    # Emacs (eglot + flymake, emacs --batch)
#
# Options:
#   --no-install   do not apt-get install missing system packages (as root
#                  it installs chromium, emacs-nox, elpa-eglot and the
#                  build tools code-server's npm install needs)
#   --fresh        reinstall editors/vscode/e2e/node_modules even if current
# Environment:
#   CSA_LSP            a csa-lsp binary to test (default: cargo build --release
#                      -p csa-lsp, in $CARGO_TARGET_DIR or target/)
#   CSA_E2E_ARTIFACTS  where the VS Code screenshots go (default: a temp dir)
#   CSA_E2E_TIMEOUT    seconds for each wait inside a test (default 60)
#   CSA_E2E_REQUIRE=1  a skip counts as a failure
#   CHROMIUM           the browser (default /usr/bin/chromium)
#
# Each test prints PASS:, FAIL: or SKIP: <reason>. A test skips when its
# editor cannot be installed or started here (no registry, wrong node, no
# eglot...). Exit status: 1 if a test failed, else 0. The last line is
# "editor-e2e: N passed, N failed, N skipped".
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
E2E="$ROOT/editors/vscode/e2e"
run_vscode=0
run_emacs=0
install=1
fresh=0
for arg in "$@"; do
  case "$arg" in
    --vscode) run_vscode=1 ;;
    --emacs) run_emacs=1 ;;
    --no-install) install=0 ;;
    --fresh) fresh=1 ;;
    -h | --help)
      sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "unknown argument: $arg (try --help)" >&2
      exit 2
      ;;
  esac
done
if [ "$run_vscode$run_emacs" = 00 ]; then
  run_vscode=1
  run_emacs=1
fi

passed=0
failed=0
skipped=0
summary=()
WORK="$(mktemp -d "${TMPDIR:-/tmp}/csa-editor-e2e.XXXXXX")"
CHILD=""

cleanup() {
  # The test drivers clean up after themselves; this stops one that an
  # interrupt caught midway (each runs as the leader of its own group).
  if [ -n "$CHILD" ] && kill -0 "$CHILD" 2>/dev/null; then
    kill -TERM -- "-$CHILD" 2>/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 "$CHILD" 2>/dev/null || break
      sleep 1
    done
    kill -KILL -- "-$CHILD" 2>/dev/null
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 130' INT TERM HUP

now() { date +%s; }

# record NAME STATUS SECONDS [DETAIL]
record() {
  case "$2" in
    PASS) passed=$((passed + 1)) ;;
    SKIP)
      if [ "${CSA_E2E_REQUIRE:-0}" = 1 ]; then
        failed=$((failed + 1))
      else
        skipped=$((skipped + 1))
      fi
      ;;
    *) failed=$((failed + 1)) ;;
  esac
  summary+=("$1: $2 (${3}s)${4:+ $4}")
}

# run_limited SECONDS LOGFILE CMD...: runs CMD in its own process group with
# a time limit, output to the terminal and LOGFILE; returns its status.
run_limited() {
  local limit="$1" logfile="$2"
  shift 2
  setsid timeout -k 15 "$limit" "$@" > >(tee "$logfile") 2>&1 &
  CHILD=$!
  wait "$CHILD"
  local status=$?
  CHILD=""
  sleep 0.2 # let tee finish
  return "$status"
}

apt_install() {
  # apt_install PKG...: installs what is missing, as root, unless --no-install.
  [ "$install" = 1 ] || return 1
  [ "$(id -u)" = 0 ] || return 1
  command -v apt-get >/dev/null || return 1
  local missing=()
  for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  echo "apt-get install -y ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq "${missing[@]}" >"$WORK/apt.log" 2>&1 && return 0
  apt-get update -qq >>"$WORK/apt.log" 2>&1
  apt-get install -y -qq "${missing[@]}" >>"$WORK/apt.log" 2>&1 || {
    tail -5 "$WORK/apt.log"
    return 1
  }
}

# ---------------------------------------------------------------- csa-lsp
if [ -n "${CSA_LSP:-}" ]; then
  LSP="$(readlink -f "$CSA_LSP")"
  echo "== csa-lsp: $LSP (from CSA_LSP)"
else
  echo "== building csa-lsp (cargo build --release -p csa-lsp)"
  t0=$(now)
  (cd "$ROOT" && cargo build --release --locked -p csa-lsp) || {
    echo "FAIL: csa-lsp does not build"
    exit 1
  }
  LSP="${CARGO_TARGET_DIR:-$ROOT/target}/release/csa-lsp"
  case "$LSP" in /*) ;; *) LSP="$ROOT/$LSP" ;; esac
  echo "csa-lsp built in $(($(now) - t0))s: $LSP"
fi
if [ ! -x "$LSP" ]; then
  echo "FAIL: no csa-lsp binary at $LSP"
  exit 1
fi

# ---------------------------------------------------------------- VS Code
vscode() {
  local t0 status line
  t0=$(now)
  echo
  echo "== VS Code: code-server + headless Chromium"
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    record vscode SKIP 0 "no node/npm"
    echo "SKIP: node and npm are not installed"
    return
  fi
  # code-server's npm package runs on one node major only (its engines field).
  local want have
  want=$(sed -n 's/.*"code-server": *"\([^"]*\)".*/\1/p' "$E2E/package.json")
  have=$(node -p 'process.versions.node.split(".")[0]')
  if [ "$have" != 20 ]; then
    record vscode SKIP "$(($(now) - t0))" "node $have"
    echo "SKIP: code-server $want needs node 20; this is node $(node --version)"
    return
  fi
  # Chromium, and what code-server's postinstall compiles VS Code's native
  # modules with (kerberos needs the krb5 headers; ripgrep is seeded below).
  apt_install chromium build-essential pkg-config python3 libkrb5-dev libxkbfile-dev libsecret-1-dev ripgrep ||
    echo "(could not apt-get install the prerequisites; trying with what is there)"

  # npm ci, unless node_modules was installed from this very lock by this node.
  local stamp_want stamp_file="$E2E/node_modules/.csa-e2e-stamp"
  stamp_want="$(sha256sum "$E2E/package-lock.json" | cut -d' ' -f1) node-$(node --version)"
  if [ "$fresh" = 0 ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp_want" ]; then
    echo "editors/vscode/e2e/node_modules is current (--fresh to reinstall)"
  else
    echo "npm ci in editors/vscode/e2e (code-server $want; compiles native modules, a few minutes)"
    # @vscode/ripgrep's postinstall downloads rg from GitHub; it first looks
    # in its cache under TMPDIR, which we fill with the system's rg.
    local npmtmp="$WORK/npm-tmp" rg_version rg_tag
    rg_version=1.15.11   # the @vscode/ripgrep of code-server 4.100.3's VS Code
    rg_tag=v13.0.0-10    # the ripgrep release that version downloads
    mkdir -p "$npmtmp/vscode-ripgrep-cache-$rg_version" "$WORK/rg"
    if command -v rg >/dev/null; then
      cp "$(command -v rg)" "$WORK/rg/rg"
      tar czf "$npmtmp/vscode-ripgrep-cache-$rg_version/ripgrep-$rg_tag-x86_64-unknown-linux-musl.tar.gz" -C "$WORK/rg" rg
    fi
    local nodedir
    nodedir="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
    if (cd "$E2E" && rm -rf node_modules &&
      TMPDIR="$npmtmp" npm_config_yes=true npm_config_unsafe_perm=true \
        npm_config_nodedir="$nodedir" npm_config_update_notifier=false \
        timeout 1800 npm ci --no-audit --no-fund --foreground-scripts) >"$WORK/npm-e2e.log" 2>&1 &&
      [ -d "$E2E/node_modules/code-server/lib/vscode/node_modules" ]; then
      echo "$stamp_want" >"$stamp_file"
      echo "npm ci done in $(($(now) - t0))s"
    else
      echo "---- npm ci (tail) ----"
      grep -E 'npm error|ERR!|fatal error|failed' "$WORK/npm-e2e.log" | tail -15
      record vscode SKIP "$(($(now) - t0))" "npm ci failed"
      echo "SKIP: code-server could not be installed (npm ci in editors/vscode/e2e failed; see above)"
      return
    fi
  fi

  # The extension, built and packaged as a user would (vsce), without this
  # test directory in the package.
  local t1
  t1=$(now)
  echo "building the extension (npm ci, compile, vsce package)"
  if ! (cd "$ROOT/editors/vscode" && npm ci --no-audit --no-fund) >"$WORK/npm-ext.log" 2>&1; then
    tail -15 "$WORK/npm-ext.log"
    record vscode SKIP "$(($(now) - t0))" "npm ci of the extension failed"
    echo "SKIP: npm ci in editors/vscode failed (no registry?)"
    return
  fi
  { cat "$ROOT/editors/vscode/.vscodeignore" 2>/dev/null; printf '\ne2e/**\n'; } >"$WORK/vscodeignore"
  if ! (cd "$ROOT/editors/vscode" && npm run compile &&
    npx --no-install vsce package --no-yarn --allow-missing-repository \
      --ignoreFile "$WORK/vscodeignore" -o "$WORK/csa-lint.vsix") >"$WORK/ext.log" 2>&1; then
    tail -30 "$WORK/ext.log"
    record vscode FAIL "$(($(now) - t0))" "the extension does not build"
    echo "FAIL: the extension does not compile or package"
    return
  fi
  echo "extension packaged in $(($(now) - t1))s: $(du -h "$WORK/csa-lint.vsix" | cut -f1)"

  local t2
  t2=$(now)
  run_limited 900 "$WORK/vscode.log" env CSA_LSP="$LSP" CSA_VSIX="$WORK/csa-lint.vsix" \
    node "$E2E/run.js"
  status=$?
  line=$(grep -E '^(PASS|FAIL|SKIP):' "$WORK/vscode.log" | tail -1)
  if [ "$status" = 124 ] || [ "$status" = 137 ]; then
    record vscode FAIL "$(($(now) - t0))" "(run.js timed out; test ${status})"
  elif [ "$status" != 0 ]; then
    record vscode FAIL "$(($(now) - t0))" "(test $(($(now) - t2))s)"
  elif [ "${line%%:*}" = SKIP ]; then
    record vscode SKIP "$(($(now) - t0))" "${line#SKIP: }"
  elif [ "${line%%:*}" = PASS ]; then
    record vscode PASS "$(($(now) - t0))" "(test $(($(now) - t2))s)"
  else
    record vscode FAIL "$(($(now) - t0))" "(no PASS line)"
  fi
}

# ---------------------------------------------------------------- Emacs
emacs_test() {
  local t0 status line
  t0=$(now)
  echo
  echo "== Emacs: eglot + flymake in emacs --batch"
  if ! command -v emacs >/dev/null; then
    apt_install emacs-nox elpa-eglot || true
  elif ! emacs --batch --eval "(kill-emacs (if (locate-library \"eglot\") 0 1))" >/dev/null 2>&1; then
    apt_install elpa-eglot || true
  fi
  if ! command -v emacs >/dev/null; then
    record emacs SKIP 0 "no emacs"
    echo "SKIP: emacs is not installed (apt-get install -y emacs-nox elpa-eglot)"
    return
  fi
  # The test skips by itself when eglot is missing.
  run_limited 300 "$WORK/emacs.log" env CSA_LSP="$LSP" \
    emacs --batch -l "$ROOT/editors/emacs/test/csa-lint-test.el"
  status=$?
  line=$(grep -E '^(PASS|FAIL|SKIP):' "$WORK/emacs.log" | tail -1)
  if [ "$status" != 0 ]; then
    record emacs FAIL "$(($(now) - t0))" "(exit $status)"
  elif [ "${line%%:*}" = SKIP ]; then
    record emacs SKIP "$(($(now) - t0))" "${line#SKIP: }"
  elif [ "${line%%:*}" = PASS ]; then
    record emacs PASS "$(($(now) - t0))"
  else
    record emacs FAIL "$(($(now) - t0))" "(no PASS line)"
  fi
}

[ "$run_vscode" = 1 ] && vscode
[ "$run_emacs" = 1 ] && emacs_test

echo
echo "== summary"
for s in "${summary[@]}"; do
  echo "$s"
done
echo "editor-e2e: ${passed} passed, ${failed} failed, ${skipped} skipped"
[ "$failed" = 0 ]
