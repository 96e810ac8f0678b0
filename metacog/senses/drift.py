"""Drift: the recent actions no longer touch anything the person's request named."""

from __future__ import annotations

from metacog.senses.signal import Signal, forget, memory, peek, short

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (3.7 ms on the direct path)
if TYPE_CHECKING:
    from metacog.nervous import Context

NAME = "drift"
TERMS_CAP = 24
_PUNCT = "`'\"()[]{}<>,;:!?"


def _without_tags(text: str) -> str:
    """The request without <tag>…</tag> blocks an IDE or a tool wraps around it."""
    out, depth, i = [], 0, 0
    while i < len(text):
        if text[i] == "<":
            end = text.find(">", i)
            if end > i and (text[i + 1 : i + 2].isalpha() or text[i + 1 : i + 2] == "/"):
                depth += -1 if text[i + 1] == "/" else (0 if text[end - 1] == "/" else 1)
                depth = max(depth, 0)
                out.append(" ")
                i = end + 1
                continue
        if depth == 0:
            out.append(text[i])
        i += 1
    return "".join(out)


def terms_of(prompt: str) -> list[str]:
    """Names in a request worth following: paths, file names, code identifiers.

    Only these short terms are kept, never the prompt itself.
    """
    found: list[str] = []
    for word in _without_tags(prompt[:20000]).split():
        word = word.strip(_PUNCT + "*~").rstrip(".").strip(_PUNCT + "*~")
        # Extensions alone (".zip"), decorators ("@pytest"), rules of underscores: not names.
        if (
            len(word) < 4
            or len(word) > 80
            or not word[0].isalnum()
            or sum(c.isalnum() for c in word) < 4
        ):
            continue
        is_path = "/" in word or (
            "." in word and word.rsplit(".", 1)[-1].isalnum() and not word.endswith(".")
        )
        is_code = "_" in word or (word[0].islower() and any(c.isupper() for c in word[1:]))
        if (is_path or is_code) and "://" not in word:
            term = (word.rsplit("/", 1)[-1] if is_path else word).lower()
            if len(term) >= 4 and term not in found:
                found.append(term)
        if len(found) >= TERMS_CAP:
            break
    return found


def feel(win: dict, action: dict, ctx: Context) -> Signal | None:
    if not ctx.is_main:
        return None
    mem = memory(win, NAME)
    terms = mem.get("terms") or []
    if not terms:
        return None
    target = action["target"].lower()
    if any(term in target for term in terms):
        mem["on_track"] = True
        mem["away"] = 0
        return None
    mem["away"] = away = mem.get("away", 0) + 1
    if mem.get("on_track") and away == ctx.cfg[NAME]["recent_calls"] and not mem.get("said"):
        mem["said"] = True
        named = ", ".join(short(t, 30) for t in terms[:3])
        return Signal(
            NAME,
            f"the last {away} actions touched none of what the request named ({named}). "
            "Is this detour needed for the task?",
        )
    return None


def reading(win: dict, ctx: Context) -> str:
    away = peek(win, NAME).get("away", 0)
    return f"{away} actions away from the request's names" if away >= 5 else ""


def on_prompt(win: dict, prompt: str, now: float) -> None:
    """A new request: follow what it names (short terms only, never the prompt itself)."""
    forget(win, NAME)
    memory(win, NAME)["terms"] = terms_of(prompt)


def following(win: dict) -> bool:
    """Whether the request named things and the work has touched them."""
    mem = peek(win, NAME)
    return bool(mem.get("terms")) and bool(mem.get("on_track"))
