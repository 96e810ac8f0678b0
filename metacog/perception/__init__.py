"""Perception: what a tool call was and what its result says, read once, before any sense feels.

`call` is the record of one call every reader reads (the facts, the senses, the session
summary, replay); `novelty` what a result brought that the session had not already shown, and
whether the call met an obstacle; `turns` which model response made a call; `reach` the files
that import what an edit changed.
"""
