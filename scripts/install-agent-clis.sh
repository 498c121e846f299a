#!/usr/bin/env bash
# install-agent-clis.sh — install the real Claude Code and Codex CLIs used by the resume probes
# (../shared/tools/*-resume-probe.mjs) into a cache folder, outside the project's node_modules.
#
#   scripts/install-agent-clis.sh            # prints CLAUDE_BIN=... and CODEX_BIN=... on stdout
#   eval "$(scripts/install-agent-clis.sh)"  # sets both in the current shell
#
# Environment:
#   CTXVM_AGENT_CACHE      cache root (default $HOME/.cache/ctxvm-agents); one npm prefix per CLI
#   CLAUDE_CODE_VERSION    default 2.1.328
#   CODEX_VERSION          default 0.169.0
#
# Idempotent: a CLI whose wrapper package is at the wanted version and whose binary answers
# `--version` with that version is not reinstalled. Only the npm registry is needed: both CLIs
# ship their native binaries inside platform-specific optional dependencies
# (@anthropic-ai/claude-code-<os>-<arch>, @openai/codex@<v>-<os>-<arch>), so nothing is
# downloaded from elsewhere. Claude Code's postinstall (install.cjs) only links the native binary
# from its platform package over the bin/claude.exe placeholder; if scripts were skipped we run
# it ourselves, and as a last resort point CLAUDE_BIN at the platform package's binary.
#
# Progress goes to stderr; stdout carries only the two KEY=VALUE lines. Exit 1 if either CLI
# cannot be installed or does not run.
set -euo pipefail

CACHE="${CTXVM_AGENT_CACHE:-$HOME/.cache/ctxvm-agents}"
CLAUDE_VERSION="${CLAUDE_CODE_VERSION:-2.1.328}"
CODEX_VER="${CODEX_VERSION:-0.169.0}"

log() { printf '%s\n' "install-agent-clis: $*" >&2; }

# installed_version PREFIX PACKAGE -> version from its package.json, or empty
installed_version() {
  local pj="$1/node_modules/$2/package.json"
  [[ -f "$pj" ]] || return 0
  node -e 'try{process.stdout.write(require(process.argv[1]).version||"")}catch{}' "$pj"
}

# runs_as BIN VERSION -> success if `BIN --version` prints VERSION
runs_as() {
  local out
  [[ -x "$1" ]] || return 1
  out="$("$1" --version 2>/dev/null </dev/null)" || return 1
  [[ "$out" == *"$2"* ]]
}

npm_install() { # PREFIX SPEC
  mkdir -p "$1"
  # --no-save would still write a lockfile under the prefix; that is fine (it is a cache).
  # EBADENGINE warnings (Claude Code declares node>=22) are harmless: the CLI is a native binary.
  npm install --prefix "$1" --no-audit --no-fund --loglevel=error "$2" >&2
}

platform_key() { # matches install.cjs getPlatformKey() for linux/darwin
  node -e '
    const os = require("os"); let p = process.platform, a = os.arch();
    if (p === "linux") { const r = process.report.getReport(); if (r.header.glibcVersionRuntime === undefined) a += "-musl"; }
    process.stdout.write(p + "-" + a);'
}

install_claude() {
  local prefix="$CACHE/claude-code-$CLAUDE_VERSION"
  local bin="$prefix/node_modules/.bin/claude"
  local pkgdir="$prefix/node_modules/@anthropic-ai/claude-code"
  local native="$prefix/node_modules/@anthropic-ai/claude-code-$(platform_key)/claude"
  if [[ "$(installed_version "$prefix" @anthropic-ai/claude-code)" == "$CLAUDE_VERSION" ]] && runs_as "$bin" "$CLAUDE_VERSION"; then
    log "claude-code $CLAUDE_VERSION already installed in $prefix"
  else
    log "installing @anthropic-ai/claude-code@$CLAUDE_VERSION into $prefix"
    local t0=$SECONDS
    npm_install "$prefix" "@anthropic-ai/claude-code@$CLAUDE_VERSION"
    log "npm install took $((SECONDS - t0))s"
    if ! runs_as "$bin" "$CLAUDE_VERSION" && [[ -f "$pkgdir/install.cjs" ]]; then
      log "bin/claude.exe is still the placeholder (postinstall skipped?); running install.cjs"
      (cd "$pkgdir" && node install.cjs >&2) || true
    fi
  fi
  if runs_as "$bin" "$CLAUDE_VERSION"; then CLAUDE_BIN="$bin"
  elif runs_as "$native" "$CLAUDE_VERSION"; then
    log "using the platform package binary directly: $native"
    CLAUDE_BIN="$native"
  else
    log "Claude Code $CLAUDE_VERSION does not run from $prefix"; return 1
  fi
}

install_codex() {
  local prefix="$CACHE/codex-$CODEX_VER"
  local bin="$prefix/node_modules/.bin/codex"
  if [[ "$(installed_version "$prefix" @openai/codex)" == "$CODEX_VER" ]] && runs_as "$bin" "$CODEX_VER"; then
    log "codex $CODEX_VER already installed in $prefix"
  else
    log "installing @openai/codex@$CODEX_VER into $prefix"
    local t0=$SECONDS
    npm_install "$prefix" "@openai/codex@$CODEX_VER"
    log "npm install took $((SECONDS - t0))s"
  fi
  # bin/codex.js is a Node launcher that finds vendor/<triple>/bin/codex in the platform package
  # (an npm alias of @openai/codex@<v>-<os>-<arch>) and puts its bundled rg on PATH.
  if runs_as "$bin" "$CODEX_VER"; then CODEX_BIN="$bin"
  else log "Codex $CODEX_VER does not run from $prefix"; return 1
  fi
}

command -v npm >/dev/null || { log "npm not found on PATH"; exit 1; }
mkdir -p "$CACHE"
CLAUDE_BIN="" CODEX_BIN=""
status=0
install_claude || status=1
install_codex || status=1
[[ -n "$CLAUDE_BIN" ]] && printf 'CLAUDE_BIN=%s\n' "$CLAUDE_BIN"
[[ -n "$CODEX_BIN" ]] && printf 'CODEX_BIN=%s\n' "$CODEX_BIN"
exit $status
