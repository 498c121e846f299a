#!/bin/sh
# Runs the ctxvm CLI for the plugin's hooks, MCP server and commands. The plugin carries no copy
# of ctxvm: it uses the one installed on PATH (npm install -g), or $CTXVM_BIN when set.
if [ -n "$CTXVM_BIN" ]; then exec $CTXVM_BIN "$@"; fi
if command -v ctxvm >/dev/null 2>&1; then exec ctxvm "$@"; fi
echo "ctxvm plugin: the ctxvm command is not installed. Install it once: git clone the ctxvm repository, then in it: npm install && npm pack && npm install -g ./ctxvm-*.tgz" >&2
exit 1
