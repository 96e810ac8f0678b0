"""The senses, in the order their observations are combined into one message.

What a sense is (its NAME, settings, `feel`, `reading` and optional hooks) and what it is
handed is stated in metacog.senses.contract. Adding a sense is one module and one line here:
its settings section, the learned patterns' list of sense names and the readings all derive
from this tuple.
"""

from __future__ import annotations

from metacog.senses import chronos, drift, echo, habit, nociception, o2, spatial, vestibular

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.senses.contract import Sense

SENSES: tuple[Sense, ...] = (nociception, habit, vestibular, o2, chronos, spatial, echo, drift)
