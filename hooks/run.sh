# metacog's only hook command. Runs the plugin's own interpreter by its real path
# (no PATH search, no pyenv shim: a shim alone costs 88 ms, eight times a bare start).
# Every path exits 0 and prints nothing of its own but one line: a first-run setup that
# failed is said once to the person (runtime/.tell, a systemMessage bootstrap.py wrote).
# The version below must equal .claude-plugin/plugin.json (tests/test_layout.py checks it).
# hooks.json runs it as `exec sh …/run.sh`: Claude Code runs each hook command through
# `/bin/sh -c`, and without `exec` that shell stays, waiting, as this one's parent (the real
# CLI 2.1.328, its process chain read from inside a hook): a process fewer per call.
V=0.1.0
[ "${METACOG_DISABLE:-}" = 1 ] && exit 0
D="${CLAUDE_PLUGIN_DATA:-${HOME:-/nonexistent}/.claude/plugins/data/metacog-inline}"
R="$D/runtime/$V"
if [ "${1:-}" = session-start ] && [ ! -f "$R/.ready" ]; then
    # Once per plugin version: build the runtime. stdin stays for the hook below.
    for py in python3.13 python3.12 python3.11 python3.10 python3; do
        # A pyenv shim for a version that is installed but not active exits 127: skip it.
        "$py" -c "" >/dev/null 2>&1 || continue
        "$py" "$(dirname "$0")/bootstrap.py" "$D" "$V" </dev/null >/dev/null 2>&1
        [ $? = 3 ] || break  # 3: too old an interpreter, try the next
    done
    T="$D/runtime/.tell"
    if [ ! -f "$R/.ready" ] && [ -f "$T" ] && [ ! -L "$T" ]; then
        head -c 2000 "$T" 2>/dev/null
        rm -f "$T"
    fi
fi
[ -f "$R/.ready" ] || exit 0
# The interpreter's own stderr (a crash before the hook's boundary) goes to a log; not
# through `exec`: a redirection that fails there ends the shell with status 2, which
# Claude Code would hand the model as an error.
L="$D/hook-stderr.log"
{ [ -d "$D" ] && [ -w "$D" ] && { [ ! -e "$L" ] || { [ -f "$L" ] && [ -w "$L" ]; }; }; } || L=/dev/null
# Created 0600 like metacog's other files (it may hold paths from a traceback); the
# umask in a subshell: the hook's own files keep theirs.
[ -e "$L" ] || (umask 077 && : >>"$L") 2>/dev/null
# While a resident metacog process runs (metacog/resident.py), it answers every event,
# a session's start and end too: handing it the call costs a Perl start, not a Python
# start and imports (inside Claude Code 2.1.328, a direct SessionStart took 62 ms and a
# SessionEnd 75 ms, each about 5 ms of work: that was a third of what metacog added to a
# 30-call session). A start it does not take runs here, and starts one for the calls.
M=direct
if [ "${METACOG_RESIDENT:-}" != 0 ] && [ -S "$R/resident/hook.sock" ] &&
    command -v perl >/dev/null 2>&1; then
    H="${0%/*}"
    [ "$H" = "$0" ] && H=.
    # PERL_BADLANG=0: no warning on every call where the locale is not installed.
    PERL_BADLANG=0 perl -T "$H/client.pl" "$R/resident" 2>>"$L" && exit 0
    # Not 0: the resident process did not take the call (client.pl exits 0 once it
    # has), and stdin is untouched: the hook runs here. 4: it did not take it in time,
    # and may be stuck (metacog/protocol.py).
    [ $? = 4 ] && M=late
fi
# -I: the user's PYTHONPATH or PYTHONSTARTUP must not reach metacog's interpreter.
"$R/bin/python" -I -c "import sys; from metacog.hook import main; main(mode=sys.argv[1])" "${1:-$M}" 2>>"$L"
exit 0
