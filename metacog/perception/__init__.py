"""Perception: what a tool call was and what its result says, read once, before any sense feels.

`action` reads a payload (or a refused call the transcript tells) into a `call.Call`, the
record every reader of a call reads (the facts, the senses, the session summary, replay);
`tools` names Claude Code's tools by role, `shell` what a shell command does (the program
it runs, whether it reads, seeks, writes or runs the tests); `signature` is what identifies
an error, `symptoms` the problems and the kind of mistake a failure names, `hidden` a
failure that exited 0; `novelty` what a result brought that the session had not already
shown, and whether the call met an obstacle; `turns` which model response made a call;
`reach` the files that import what an edit changed.
"""
