"""One handler per Claude Code event: the call (metacog.event) in, reply object (or None for silence) out."""

from __future__ import annotations

from metacog import config, fsutil, learning, nervous, paths, schema, state, summary, transcript
from metacog.event import Event
from metacog.perception import action as actions
from metacog.perception import novelty
from metacog.perception.call import Call
from metacog.perception.tools import EDIT_TOOLS, FILE_TOOLS, REFUSAL_TAG

TASK_NOTIFICATION = "<task-notification>"  # a finished background agent, not the person
PENDING_CAP = 3  # notes waiting for the main agent's next call
HEARD_CAP = 64  # refused calls' tool_use ids remembered, so that each is felt once
# Replay's list of the calls the hook felt, in order, each with what perception read of it
# (call, gain, news, obstacle): replay records the hook's own Call, and the report's loops
# are found from the same facts as the senses. None in the live hook, which keeps nothing.
FELT: list[tuple[Call, float, int, bool]] | None = None


def reply(event: str, agent_text: str = "", person_text: str = "") -> dict | None:
    out: dict = {}
    if agent_text:
        out["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": agent_text}
    if person_text:
        out["systemMessage"] = person_text
    return out or None


def _settings(st: dict, event: Event) -> tuple[dict, str]:
    cwd = event.cwd
    if st.get("cwd") != cwd or "root" not in st:
        st["cwd"], st["root"] = cwd, config.project_root(cwd)
    return schema.load(paths.config_dir(), st["root"]), st["root"]


def _read_transcript(st: dict, event: Event, cfg: dict, state_dir: str, now: float) -> list[Call]:
    """Fold the transcript's news into the state; return the refused calls it told."""
    cursor = st.setdefault("transcript", {})
    news = transcript.read_new(event.transcript, cursor)
    context = st.setdefault("context", {})
    if news.compacted:
        context["tokens"] = 0
        context["compactions"] = context.get("compactions", 0) + 1
        main = state.window(st, "", now)
        notes = nervous.compacted(nervous.Context(cfg, st, main, None, now, state_dir))
        # Told at SessionStart already: the senses forgot then, and the mark is used up now.
        if not st.pop("compaction_told", False):
            for note in notes:
                _queue(st, note)
    if news.tokens:
        context["tokens"], context["model"] = news.tokens, news.model or context.get("model", "")
    held = context.get("held")
    held = held if isinstance(held, int) and not isinstance(held, bool) else 0
    if news.held > held:  # what the window must have room for: it never shrinks (facts._fill)
        context["held"] = news.held
    context["responses"] = context.get("responses", 0) + news.responses
    refused = []
    for name, tool_input, error, turn, use_id in news.refused:
        if not _first_heard(st, use_id):
            continue  # told by its batch already (on_batch)
        _refused_edit(st, cfg, name, tool_input, error, "")
        refused.append(_refused(name, tool_input, error, turn, event.cwd, now))
    return refused


def _refused_edit(st: dict, cfg: dict, name: str, tool_input: dict, error: str, agent: str) -> None:
    """An edit Claude Code refused is evidence for the turn's end until it is made
    (metacog.turn_end)."""
    if name in EDIT_TOOLS and cfg["turn-end"]["enabled"]:
        from metacog import turn_end

        turn_end.observe(turn_end.memory(st, agent), name, tool_input, error, True, None)


def _first_heard(st: dict, use_id: str) -> bool:
    """Whether a refused call is heard now for the first time (then remembered): its batch
    (PostToolBatch) and the transcript both tell it, whichever comes first is felt."""
    heard = st.get("refusals_heard")
    if not isinstance(heard, list):
        heard = st["refusals_heard"] = []
    if not use_id:
        return True  # no id to know it by (a damaged line): felt, as before batches were heard
    if use_id in heard:
        return False
    heard.append(use_id)
    del heard[:-HEARD_CAP]
    return True


def _refused(
    name: str, tool_input: dict, error: str, turn: int, cwd: str, now: float, agent: str = ""
) -> Call:
    prints, named = novelty.read(name, tool_input, "", error)
    return actions.make(
        name,
        actions.target_of(name, tool_input, cwd),
        error,
        0,
        0,
        now,
        agent,
        path=actions.file_of(tool_input) if name in FILE_TOOLS else "",
        prints=tuple(prints),
        named=tuple(named),
        refused=True,  # no call's hook fired: Claude Code refused it before running it
        turn=turn,  # several refusals read at once were still each their own attempt
        **actions.acted(name, tool_input),
    )


def _queue(st: dict, note: str) -> None:
    pending = st.setdefault("pending", [])
    if note not in pending:
        pending.append(note)
    del pending[:-PENDING_CAP]


def on_tool(event: Event, state_dir: str, now: float) -> dict | None:
    if not event.session:
        return None
    call = actions.from_event(event, now)
    with state.Session(state_dir, event.session, now) as st:
        cfg, root = _settings(st, event)
        totals = summary.get(st)
        signals = []
        for refused in _read_transcript(st, event, cfg, state_dir, now):
            signals += _feel(st, refused, event, cfg, state_dir, root, totals, now)[0]
        if event.transcript:
            call = call.but(turn=transcript.turn_of(st.get("transcript") or {}, event.tool_use_id))
        felt, ctx = _feel(st, call, event, cfg, state_dir, root, totals, now)
        signals += felt
        if cfg["turn-end"]["enabled"] and (event.tool == "Bash" or event.tool in EDIT_TOOLS):
            _observe(st, event, state_dir)
        if ctx.tokens:  # how full the context got, for the context-pressure pattern
            summary.bump_max(totals, "max_context_fill", round(ctx.fill, 3))
        agent_text, person_text = nervous.compose(signals)
        if not call.agent and st.get("pending"):
            extra = " ".join(st.pop("pending"))
            agent_text = f"{agent_text} {extra}" if agent_text else nervous.PREFIX + extra
    return reply(event.name, agent_text, person_text)


def on_batch(event: Event, state_dir: str, now: float) -> dict | None:
    """The calls of one model response, all answered (PostToolBatch, after their own hooks):
    the calls Claude Code refused before running them fired no hook of their own, so they are
    heard here, where they happen, not at the next call that runs, if one does. A batch
    without a refusal is left at once, its state untouched."""
    told = [call for call in event.calls if call[3].lstrip().startswith(REFUSAL_TAG)]
    if not event.session or not told:
        return None
    with state.Session(state_dir, event.session, now) as st:
        cfg, root = _settings(st, event)
        totals = summary.get(st)
        # The transcript first: it holds the batch already (measured, 2.1.328), with each
        # call's model turn, and what it says of the context; what it told is not told again.
        calls = _read_transcript(st, event, cfg, state_dir, now)
        cursor = st.get("transcript") or {}
        for name, tool_input, use_id, response in told:
            if not _first_heard(st, use_id):
                continue
            _refused_edit(st, cfg, name, tool_input, response, event.agent)
            turn = transcript.turn_of(cursor, use_id)
            calls.append(_refused(name, tool_input, response, turn, event.cwd, now, event.agent))
        said: dict[str, nervous.Signal] = {}
        for call in calls:
            for signal in _feel(st, call, event, cfg, state_dir, root, totals, now, fire=False)[0]:
                # One reply for the batch, one word per sense: its last, which has heard the
                # whole batch (Nociception counts the calls of a batch that met one wall).
                said[signal.sense] = signal
        for sense in said:
            summary.fired(totals, sense)
        agent_text, person_text = nervous.compose(list(said.values()))
    return reply(event.name, agent_text, person_text)


def _observe(st: dict, event: Event, state_dir: str) -> None:
    """What the turn's end will be held against (metacog.turn_end), kept at each call: the
    transcript may not hold the turn's last results yet at its Stop (measured, docs/turn-end.md)."""
    from metacog import turn_end

    memory = turn_end.memory(st, event.agent)
    try:
        turn_end.observe_event(memory, event)
    except Exception as exc:  # noqa: BLE001 - the turn's end must not cost the call its senses
        memory.clear()  # what it kept may be what broke it
        fsutil.log_error(state_dir, f"turn-end: {exc!r}")
        fsutil.strict("turn-end", exc)


def _feel(
    st: dict,
    call: Call,
    event: Event,
    cfg: dict,
    state_dir: str,
    root: str,
    totals: dict,
    now: float,
    fire: bool = True,
) -> tuple[list, nervous.Context]:
    """Feel one call; `fire`: count its signals as said (a batch counts what its reply says)."""
    win = state.window(st, call.agent, now)
    # The window keeps the signature, not a dozen lines of problems, and its own memory of
    # what was shown (metacog.perception.novelty), not the call's fingerprints.
    state.push(win, call.record(problems=False))
    st["calls"] = st.get("calls", 0) + 1
    if not call.ok:
        st["errors"] = st.get("errors", 0) + 1
    ctx = nervous.Context(cfg, st, win, event, now, state_dir, root)
    signals = nervous.feel(win, call, ctx)
    if FELT is not None:
        FELT.append((call, ctx.gain, ctx.news, ctx.obstacle))
    summary.observe(totals, call, ctx)
    for signal in signals if fire else ():
        summary.fired(totals, signal.sense)
    for note in ctx.notes:
        if note["kind"] == "resolved":
            summary.lesson(totals, note)
    if ctx.wide_edit(call, ask=False):  # where a sense asked for the edit's reach
        totals["wide_edits"] = totals.get("wide_edits", 0) + 1
    return signals, ctx


def on_prompt(event: Event, state_dir: str, now: float) -> dict | None:
    sid = event.session
    if not sid or event.prompt.lstrip().startswith(TASK_NOTIFICATION):
        return None
    with state.Session(state_dir, sid, now) as st:
        cfg, root = _settings(st, event)
        win = state.window(st, "", now)
        win["prompt_calls"] = 0
        win["prompts"] = win.get("prompts", 0) + 1
        win["actions"] = []  # repeats and cycles count from the person's latest word
        summary.get(st)["prompts"] += 1
        nervous.heard(win, event.prompt, now)
    if not cfg["learning"]["enabled"]:
        return None
    # Outside the session lock: the digest has its own marker and cache.
    return reply("UserPromptSubmit", learning.digest_once(root, sid, state_dir, cfg, now))


# Seconds a SessionStart spends evaluating earlier sessions in the resident process: far
# less than in a hook of its own (learning.START_BUDGET_S), since other sessions' calls wait
# behind it and its watchdog ends a call at 6 s.
RESIDENT_START_BUDGET_S = 0.3


def on_session_start(event: Event, state_dir: str, now: float) -> dict | None:
    _cap_stderr_log()
    sid = event.session
    root = config.project_root(event.cwd) if sid else ""
    cfg = schema.load(paths.config_dir(), root) if sid else {}
    budget = learning.START_BUDGET_S if state.AFTER is None else RESIDENT_START_BUDGET_S

    def housekeeping() -> None:
        complete = True
        if sid and cfg["learning"]["enabled"]:
            # Sessions of this project that ended without a SessionEnd are evaluated now,
            # before the collection below could remove their state: none is collected
            # while some wait for the next start.
            complete = learning.on_session_start(root, sid, state_dir, cfg, now, budget)
        if complete:
            state.collect_garbage(state_dir, now)

    state.after_reply(housekeeping)  # nothing of it is said
    if sid and event.source == "compact":
        with state.Session(state_dir, sid, now) as st:
            cfg, _ = _settings(st, event)
            # The senses forget now what the compaction dropped; the transcript will show the
            # same compaction at the next call, with nothing read between and no second note.
            main = state.window(st, "", now)
            notes = nervous.compacted(nervous.Context(cfg, st, main, event, now, state_dir))
            if notes:
                st["compaction_told"] = True
                return reply("SessionStart", nervous.PREFIX + " ".join(notes))
    return None


def _cap_stderr_log() -> None:
    """hooks/run.sh sends the interpreter's own stderr (a crash before the boundary) to
    `hook-stderr.log` in the plugin's data folder; it is rotated here, once a session."""
    import os

    from metacog.layout import HOOK_STDERR_LOG

    data = os.environ.get("CLAUDE_PLUGIN_DATA", "")
    log = os.path.join(data, HOOK_STDERR_LOG)
    try:
        if data and os.stat(log).st_size > fsutil.LOG_CAP:
            fsutil.rotate(log)
    except OSError:
        pass


def on_subagent_stop(event: Event, state_dir: str, now: float) -> dict | None:
    """A subagent that went in circles is worth telling the main agent (with its next call);
    a final report that claims what its own last check contradicts, the subagent itself
    (additionalContext on SubagentStop keeps it going, measured on 2.1.328: docs/turn-end.md)."""
    sid, agent = event.session, event.agent
    if not sid or not agent:
        return None
    with state.Session(state_dir, sid, now) as st:
        cfg, root = _settings(st, event)
        win = st["windows"].get(f"agent:{agent}")
        if isinstance(win, dict):
            ctx = nervous.Context(cfg, st, win, event, now, state_dir, root)
            said = nervous.after_subagent(ctx)
            if said:
                _queue(st, said[0])  # one line: the first sense to speak says what matters most
        section = cfg["turn-end"]
        if not (section["enabled"] and section["subagents"]) or event.stop_active:
            return None
        return _turn_end(st, event, agent, event.sub_transcript)


def on_stop(event: Event, state_dir: str, now: float) -> dict | None:
    """The turn ends: its final message held against what the session last showed
    (metacog.turn_end). Silent, and cheap, unless a claim of it contradicts a check."""
    if not event.session or event.stop_active:
        return None
    with state.Session(state_dir, event.session, now) as st:
        cfg, _ = _settings(st, event)
        if not cfg["turn-end"]["enabled"]:
            return None
        _read_transcript(st, event, cfg, state_dir, now)  # edits refused since the last call
        return _turn_end(st, event, "", event.transcript)


def _turn_end(st: dict, event: Event, agent: str, path: str) -> dict | None:
    from metacog import turn_end

    # Claude Code writes the transcript late: at a Stop it may not hold the turn's last
    # results yet (seen in the e2e run), so the evidence is what the hook kept of each call;
    # the transcript gives only a final message the payload lacks.
    message = event.message or turn_end.last_message(path, sidechain=bool(agent))
    found = turn_end.holds(message, turn_end.memory(st, agent))
    if found is None or turn_end.said_before(st, found):
        return None
    totals = summary.get(st)
    totals["turn_end_claims"] = totals.get("turn_end_claims", 0) + 1
    return reply(event.name, turn_end.observation(found, subagent=bool(agent)))


def on_session_end(event: Event, state_dir: str, now: float) -> dict | None:
    sid = event.session
    if sid:
        state.settled(state_dir, sid)  # the last call's save, if the resident still writes it
        st = state.read(state_dir, sid) or {}
        root = st.get("root") if isinstance(st.get("root"), str) else config.project_root(event.cwd)
        cfg = schema.load(paths.config_dir(), root)
        if cfg["learning"]["enabled"]:
            # Nothing of it is said: Claude Code need not wait for it (its writes, fsynced,
            # took about 20 ms inside the real CLI, issue 23).
            state.after_reply(lambda: learning.on_session_end(root, sid, state_dir, cfg, now))
    return None


HANDLERS = {
    "PostToolUse": on_tool,
    "PostToolUseFailure": on_tool,
    "PostToolBatch": on_batch,
    "UserPromptSubmit": on_prompt,
    "SessionStart": on_session_start,
    "Stop": on_stop,
    "SubagentStop": on_subagent_stop,
    "SessionEnd": on_session_end,
}
