"""How hooks/run.sh, hooks/client.pl and the resident process (metacog/server.py) talk.

One call, as Claude Code runs a hook: run.sh finds `resident/hook.sock` in the runtime
and runs `perl -T client.pl <runtime>/resident` with the payload on its stdin.

1. The client connects to SOCKET in that folder (both this user's alone) and waits up
   to TAKE_SECONDS for the resident to send TAKEN, the one byte meaning "this call is
   mine". Until then stdin is untouched: any failure (no socket, refused, another byte,
   nobody in time) exits NOT_TAKEN, or LATE when it connected but nobody took the call
   in time, and run.sh runs the hook itself with the same stdin (mode "direct", or
   "late": it may start a resident for the next calls, or replace a stuck one, see
   `resident.ensure`).
2. Taken: the client sends MAGIC, its environment's length (4 bytes, big endian; at
   most ENV_CAP, else it exits NOT_TAKEN before connecting), the environment as
   NUL-terminated NAME=value entries, then stdin to its end, and shuts down its side.
3. The resident runs the hook in that environment and sends the reply (or nothing) and
   closes. The client prints it and exits 0: from its first read of stdin on, every end
   is exit 0, silence included, so run.sh never runs a taken call again.

Bounds: the client gives up at CALL_SECONDS in all (Claude Code's hook timeout is 10 s);
the resident's watchdog ends a call stuck for WATCHDOG_SECONDS, which comes after up to
TAKE_SECONDS in line and before CALL_SECONDS. hooks/client.pl and hooks/run.sh cannot
import this module: they carry the same values, and tests/test_protocol.py checks that
they agree.
"""

from __future__ import annotations

SOCKET = "hook.sock"  # in the resident folder, `<runtime>/resident`
MAGIC = b"metacog1"  # the first bytes of a request
TAKEN = b"+"  # the resident's first byte on a connection
ENV_CAP = 8 << 20  # bytes of environment a request may carry
TAKE_SECONDS = 2  # the client waits this long for TAKEN
CALL_SECONDS = 9  # the client's bound for the whole call
WATCHDOG_SECONDS = 6  # a call running this long ends the resident process
NOT_TAKEN = 3  # client exit: stdin untouched, run.sh runs the hook itself
LATE = 4  # client exit: the same, after a resident did not take the call within TAKE_SECONDS
DONE = 0  # client exit: the call was the resident's, answered or ended in silence
