"""signature() on real error texts: the hand-written scanners it replaced against the patterns.

    python benchmarks/bench_signature.py [TRANSCRIPTS_DIR] [--old REV] [--rounds 200] [--process-runs 30]

The texts are the errors the hook gets from the transcripts in ../shared/transcripts
(every PostToolUseFailure that metacog.replay makes of them), read at run time; they
are not part of this repository. The old implementation is metacog/signature.py as of
REV (default: the newest commit where it has no `import re`), loaded from git.

In process (what the resident pays per failure): both implementations over all the
texts, one round of each in turn, medians per call and their ratio; the same for
kind(signature). Then whether the two agree on every text. Then whole processes (the
direct path): a bare interpreter, one that imports re, and one that imports each
implementation and makes one signature, interleaved: the new one pays `import re` and
compiling its patterns.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metacog.perception import signature as new
from metacog.replay import events

DEFAULT_DIR = ROOT.parent / "shared" / "transcripts"
MODULE = "metacog/perception/signature.py"
OLD_MODULE = "metacog/signature.py"  # its path in the revisions compared, before perception/


def error_texts(folder: Path) -> list[str]:
    out = []
    for path in sorted(folder.glob("*.jsonl")):
        with open(path, encoding="utf-8", errors="replace") as fh:
            out += [
                p["error"]
                for _, p in events(fh)
                if p.get("hook_event_name") == "PostToolUseFailure"
            ]
    return out


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    ).stdout


def old_revision() -> str:
    """The newest commit whose metacog/signature.py has no `import re` (the scanners)."""
    for rev in git("log", "--format=%H", "--", OLD_MODULE).split():
        if "\nimport re\n" not in git("show", f"{rev}:{OLD_MODULE}"):
            return rev
    raise SystemExit(f"no commit of {OLD_MODULE} without `import re`: pass --old")


def load(source: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(source, name, "exec"), module.__dict__)  # noqa: S102 - our own file at another commit
    return module


def per_call(fns: dict[str, object], inputs: list[str], rounds: int) -> dict[str, float]:
    """Median seconds per call of each function, one round of each in turn (noise hits all alike)."""
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            for text in inputs:
                fn(text)
            samples[name].append((time.perf_counter() - start) / len(inputs))
    return {name: statistics.median(s) for name, s in samples.items()}


def processes(sources: dict[str, str], text: str, runs: int) -> dict[str, float]:
    """Median wall time of a fresh interpreter: bare, and importing each source and making one signature."""
    with tempfile.TemporaryDirectory(prefix="bench-signature-") as folder:
        cmds = {
            "bare": [sys.executable, "-I", "-S", "-c", "pass"],
            "re": [sys.executable, "-I", "-S", "-c", "import re"],
        }
        for name, source in sources.items():
            Path(folder, f"sig_{name}.py").write_text(source)
            # The repository too: the new one imports a leaf of names (metacog.perception.tools).
            path = [folder, str(ROOT)]
            code = f"import sys; sys.path[:0] = {path!r}; import sig_{name}; sig_{name}.signature(sys.argv[1])"
            cmds[name] = [sys.executable, "-I", "-S", "-c", code, text]
        for cmd in cmds.values():  # writes the bytecode caches, warms the page cache
            subprocess.run(cmd, check=True)
        samples: dict[str, list[float]] = {name: [] for name in cmds}
        for _ in range(runs):
            for name, cmd in cmds.items():
                start = time.perf_counter()
                subprocess.run(cmd, check=True)
                samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(s) for name, s in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("transcripts", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--old", help="git revision of the old metacog/signature.py")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--process-runs", type=int, default=30)
    args = parser.parse_args()
    texts = error_texts(args.transcripts)
    if not texts:
        print(f"no error results in {args.transcripts}/*.jsonl", file=sys.stderr)
        return 2
    rev = args.old or old_revision()
    old_text = git("show", f"{rev}:{OLD_MODULE}")
    old = load(old_text, "signature_old")
    sizes = sorted(len(t) for t in texts)
    print(
        f"{len(texts)} error texts from {args.transcripts} (median {sizes[len(sizes) // 2]} characters, "
        f"largest {sizes[-1]}); old = {rev}:{OLD_MODULE}"
    )

    times = per_call({"old": old.signature, "new": new.signature}, texts, args.rounds)
    print(
        f"signature() per call: old {times['old'] * 1e6:.1f} us, new {times['new'] * 1e6:.1f} us, "
        f"new/old {times['new'] / times['old']:.2f}x (median of {args.rounds} rounds)"
    )
    sigs = [new.signature(t) for t in texts]
    times = per_call({"old": old.kind, "new": new.kind}, sigs, args.rounds)
    print(
        f"kind(signature) per call: old {times['old'] * 1e6:.1f} us, new {times['new'] * 1e6:.1f} us, "
        f"new/old {times['new'] / times['old']:.2f}x"
    )

    differ = [t for t in texts if old.signature(t) != new.signature(t)]
    kinds = sum(old.kind(s) != new.kind(s) for s in sigs)
    print(f"different signature: {len(differ)} of {len(texts)} texts; different kind: {kinds}")
    for text in differ[:5]:
        print(f"  old {old.signature(text)!r}\n  new {new.signature(text)!r}")

    if args.process_runs:
        sample = next(t for t in texts if "\0" not in t)  # an argv cannot hold a NUL
        walls = processes(
            {"old": old_text, "new": (ROOT / MODULE).read_text()}, sample, args.process_runs
        )
        extra = {name: (walls[name] - walls["bare"]) * 1e3 for name in ("re", "old", "new")}
        print(
            f"fresh interpreter (median of {args.process_runs}): bare {walls['bare'] * 1e3:.1f} ms; over it: "
            f"`import re` +{extra['re']:.1f} ms, old module and one signature +{extra['old']:.1f} ms, "
            f"new +{extra['new']:.1f} ms (new/bare {walls['new'] / walls['bare']:.2f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
