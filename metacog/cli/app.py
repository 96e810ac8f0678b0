"""The typer app and its one error boundary.

Every failure a person can cause (a wrong argument, an unknown key, an unreadable
file) ends as one line on stderr saying what to do, and a non-zero exit; anything
else is a bug: one line too, with the traceback logged to the state dir's
metacog.log (the log `metacog doctor` reads). The boundary lives in the group's
`main`, so `metacog`, `python -m metacog` and typer's CliRunner all go through it.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

import metacog
from metacog.cli.common import CliError, inside_claude_code, log_bug, one_line

# typer up to 0.1x runs on click; newer releases carry their own copy (typer._click),
# whose exceptions are other classes: take them from the package TyperGroup is built on.
_errors = importlib.import_module(
    TyperGroup.__mro__[1].__module__.rpartition(".")[0] + ".exceptions"
)
UsageError, ClickException = _errors.UsageError, _errors.ClickException

PROG = "metacog"
EXIT_USAGE = 2


class Group(TyperGroup):
    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        code = boundary(
            lambda: super(Group, self).main(
                args=args,
                prog_name=prog_name or PROG,
                complete_var=complete_var,
                standalone_mode=False,
                **extra,
            ),
            sys.argv[1:] if args is None else list(args),
        )
        if standalone_mode:
            sys.exit(code)
        return code


def boundary(call: Any, argv: list[str]) -> int:
    """Run the command line; the exit code, after at most one line on stderr."""
    try:
        result = call()
    except CliError as exc:
        return fail(exc.message, exc.code)
    except UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else PROG
        where = f"/{where}" if inside_claude_code() else where
        return fail(f"{one_line(exc.format_message())} (see `{where} --help`)", EXIT_USAGE)
    except ClickException as exc:
        return fail(one_line(exc.format_message()), exc.exit_code)
    except typer.Abort:
        return fail("aborted", 1)
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    except BrokenPipeError:
        # `metacog status | head`: the reader left; nothing more to say to it.
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - interpreter exit flushes
        return 1
    except Exception as exc:  # noqa: BLE001 - the one place every other failure ends up
        where = log_bug(exc, f"metacog {' '.join(argv)}")
        return fail(
            f"internal error: {type(exc).__name__}: {one_line(exc, 200)}{where}; please report it",
            1,
        )
    return result if isinstance(result, int) and not isinstance(result, bool) else 0


def fail(message: str, code: int) -> int:
    typer.echo(f"{PROG}: {message}", err=True)
    return code


def emit(obj: object) -> None:
    typer.echo(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


app = typer.Typer(
    name=PROG,
    cls=Group,
    help="metacog: what the senses read in a session, the rules learned across sessions, settings, health.",
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: readable in a `!` line's output, and no rich import
    context_settings={"help_option_names": ["-h", "--help"]},
)
config_app = typer.Typer(
    help="Show, read or change settings (TOML).",
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.add_typer(config_app, name="config")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"{PROG} {metacog.__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def main(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())


@app.command()
def status(
    session: Annotated[
        str | None,
        typer.Option(
            "--session", "-s", metavar="ID", help="A session id (or a unique prefix of one)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """This project, its latest session's readings per sense, and its learned rules with their evidence."""
    from metacog.cli import status as status_mod

    report = status_mod.collect(os.getcwd(), session)
    if as_json:
        emit(report)
    else:
        typer.echo(status_mod.render(report))


@app.command()
def forget(
    rule: Annotated[
        str, typer.Argument(metavar="RULE", help="The rule's id, as `metacog status` shows it.")
    ],
    scope: Annotated[
        str | None,
        typer.Option(
            "--scope",
            metavar="project|global",
            help="Erase it only from this project's store, or only from the global one.",
        ),
    ] = None,
) -> None:
    """Erase a rule's evidence, so it leaves the digest and is learned again only if it recurs."""
    from metacog.cli import forget as forget_mod

    typer.echo(forget_mod.forget(rule, os.getcwd(), scope))


@config_app.callback(invoke_without_command=True)
def config_main(ctx: typer.Context) -> None:
    """Show, read or change settings (TOML); `metacog config` alone shows them."""
    if ctx.invoked_subcommand is None:
        config_show(as_json=False)


@config_app.command("show")
def config_show(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Every setting's effective value and where it comes from."""
    from metacog import config
    from metacog.cli import settings

    report = settings.effective(config.project_root(os.getcwd()))
    if as_json:
        emit(report)
    else:
        typer.echo(settings.render_show(report))
    error = settings.broken_file_error(report)
    if error is not None:
        raise error


@config_app.command("get")
def config_get(
    key: Annotated[
        str, typer.Argument(metavar="KEY", help="section.key, e.g. nociception.observe_at")
    ],
) -> None:
    """One setting's effective value."""
    from metacog import config
    from metacog.cli import settings

    typer.echo(settings.get(key, config.project_root(os.getcwd())))


@config_app.command("set", context_settings={"ignore_unknown_options": True})  # VALUE may be -3
def config_set(
    key: Annotated[
        str, typer.Argument(metavar="KEY", help="section.key, e.g. nociception.observe_at")
    ],
    value: Annotated[str, typer.Argument(metavar="VALUE", help="true/false, or a number")],
    project: Annotated[
        bool,
        typer.Option(
            "--project",
            help="Write this project's .claude/metacog.toml instead of the global config.",
        ),
    ] = False,
) -> None:
    """Change one setting in the global config (or the project's, with --project)."""
    from metacog import config
    from metacog.cli import settings

    typer.echo(settings.set_value(key, value, config.project_root(os.getcwd()), project))


@app.command()
def replay(
    file: Annotated[str, typer.Argument(metavar="FILE", help="A Claude Code transcript (.jsonl).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Run the senses over a recorded transcript and count what they would have said."""
    from metacog.cli import replay as replay_mod

    result = replay_mod.run(file)
    if as_json:
        emit(result)
    else:
        typer.echo(replay_mod.render(result))


@app.command()
def report(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="PATH",
            help="Transcripts (.jsonl) or folders of them; default: every session under "
            "~/.claude/projects/.",
            show_default=False,
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since", metavar="DATE", help="Only sessions written to since DATE (YYYY-MM-DD)."
        ),
    ] = None,
    project: Annotated[
        str | None,
        typer.Option("--project", metavar="DIR", help="Only sessions that ran in DIR or below it."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print every figure as one JSON object.")
    ] = False,
    html: Annotated[
        str | None,
        typer.Option(
            "--html",
            metavar="FILE",
            help="Also write one self-contained page with a timeline per session.",
        ),
    ] = None,
) -> None:
    """What metacog said (or would have said) in your sessions, what loops cost, whether it helped."""
    from metacog.cli import report as report_mod
    from metacog.report import terminal

    result = report_mod.run(paths or [], since, project, html)
    if as_json:
        emit(result)
    else:
        typer.echo(terminal.render(result))
        if result.get("html"):
            typer.echo(f"\nPage written to {result['html']}")


@app.command()
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
) -> None:
    """Check the runtime, hooks, folders, logs, config and stores; say what to do about each problem."""
    from metacog.cli import doctor as doctor_mod

    findings = doctor_mod.diagnose(os.getcwd())
    if as_json:
        emit(
            {
                "problems": sum(1 for f in findings if f["status"] == doctor_mod.PROBLEM),
                "findings": findings,
            }
        )
    else:
        typer.echo(doctor_mod.render(findings))
    if any(f["status"] == doctor_mod.PROBLEM for f in findings):
        raise typer.Exit(1)


@app.command()
def cleanup(
    yes: Annotated[
        bool, typer.Option("--yes", help="Remove them (without it, only list them).")
    ] = False,
) -> None:
    """Remove metacog's own folders (state, learned rules, config) after `claude plugin uninstall`."""
    from metacog.cli import cleanup as cleanup_mod

    typer.echo(cleanup_mod.run(yes))


def run() -> None:
    """The console script `metacog` (and `python -m metacog`)."""
    app(prog_name=PROG)
