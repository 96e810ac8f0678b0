"""Claude Code's tools by what a call of them does: one list per role, each said once.

A call's role decides how its result is read: an edit's payload echoes the file and answers
no question; a read, a search or a listing asks one, and an empty answer to it is an answer;
a delegating call's time is its subagent's work. Tool names are the CLI's own (FACTS.md);
other tools (MCP servers', new ones) have no role here and are read by their outcome alone.
"""

from __future__ import annotations

# Tools whose input names a file.
FILE_TOOLS = ("Read", "Edit", "Write", "MultiEdit", "NotebookEdit")
# Tools that change a file: the world changed, what was not there may be there now.
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
# Tools whose result is the change they made, not an answer (a to-do list changes nothing a
# question could find).
NO_ANSWER = frozenset((*EDIT_TOOLS, "TodoWrite"))
# Questions asked of a file.
READ_TOOLS = ("Read", "NotebookRead")
# Questions asked of the project: which files, which lines, what a folder holds.
SEARCH_TOOLS = ("Grep", "Glob", "LS")
# Questions asked of the web: documentation looked up.
WEB_TOOLS = ("WebFetch", "WebSearch")
# Tools that hand the work to a subagent: the time they take is the subagent's.
DELEGATING_TOOLS = ("Task", "Agent")
# Tools that read a background job's output so far.
POLLING_TOOLS = ("BashOutput", "TaskOutput")
# Claude Code's guards, as the kinds of mistake metacog.perception.symptoms names their
# refusals: the session's permissions, and a hook that blocks. What they refuse is the
# person's or the project's no, not the world's answer, and it stays refused until the person
# changes them: no stretch of other work makes it new again (a code error may have been fixed
# meanwhile; a setting does not change by itself).
GUARDED = frozenset(("blocked", "hook-blocked"))
# Claude Code's own wrapper of a call it refused before running it (FACTS.md: no hook fires;
# the transcript's tool_result says it) and of some of its errors.
REFUSAL_TAG = "<tool_use_error>"


def untagged(text: str) -> str:
    """An error's text without Claude Code's wrapper (the words are the error, not the tags)."""
    return text.replace(REFUSAL_TAG, "").replace("</" + REFUSAL_TAG[1:], "")
