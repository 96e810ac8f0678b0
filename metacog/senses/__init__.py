"""The senses, in the order their observations are combined into one message.

Each sense is a module with NAME, a one-line docstring saying what it feels, and
`feel(win, action, ctx) -> Signal | None`; `reading(win, ctx) -> str` gives its
current reading for status and for the Layer 2 interrupt. Adding a sense is one
module and one line here.
"""

from __future__ import annotations

from metacog.senses import chronos, drift, echo, habit, nociception, o2, reflex, spatial, vestibular

SENSES = (nociception, habit, vestibular, o2, chronos, spatial, echo, drift, reflex)
