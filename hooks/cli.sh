# The /metacog slash command's launcher (commands/metacog.md): runs metacog's CLI in
# the plugin's runtime, the interpreter hooks/run.sh runs.
#   usage: sh cli.sh DATA_DIR [ARGS...]   (no ARGS: status)
# Measured on Claude Code 2.1.328: a command's `!` line gets ${CLAUDE_PLUGIN_ROOT} and
# ${CLAUDE_PLUGIN_DATA} substituted in its text, but neither in its environment, so the
# data folder comes as the first argument. A `!` line that exits non-zero stops the
# command before the model sees anything (only "Shell command failed" reaches the
# person), so this always exits 0: doctor's non-zero exit and every one-line error
# must still reach the model. stderr joins stdout for the same reason.
# The version below must equal .claude-plugin/plugin.json (tests/test_cli_launcher.py checks it).
V=0.1.0
D="${1:-}"
[ $# -gt 0 ] && shift
[ -n "$D" ] || D="${CLAUDE_PLUGIN_DATA:-${HOME:-/nonexistent}/.claude/plugins/data/metacog-inline}"
R="$D/runtime/$V"
if [ ! -f "$R/.ready" ] || [ ! -x "$R/bin/python" ]; then
    # What the folder really holds (half-built, failed at ... with the cause, retries when),
    # from bootstrap.py (standard library only) with any python3; a fixed line without one.
    python3 -I "$(dirname "$0")/bootstrap.py" --explain "$D" "$V" 2>/dev/null ||
        echo "metacog: its runtime is not ready yet ($R is missing): start a new Claude Code session, whose start builds it (needs Python 3.10+ and the package index once); if it still fails, see $D/bootstrap.log"
    exit 0
fi
[ $# -gt 0 ] || set -- status
CLAUDE_PLUGIN_DATA="$D" CLAUDE_PLUGIN_ROOT="${CLAUDE_PLUGIN_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}" \
    "$R/bin/python" -I -m metacog "$@" 2>&1
exit 0
