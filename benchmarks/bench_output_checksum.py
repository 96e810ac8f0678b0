"""action.output_checksum on real Bash results: signature.clean with and without its prefilter.

    python benchmarks/bench_output_checksum.py [TRANSCRIPTS_DIR] [--old REV] [--rounds 30]

The inputs are the Bash tool_responses the hook gets from the transcripts in
../shared/transcripts (every PostToolUse that metacog.replay makes of them), read at run
time; they are not part of this repository. Also two single outputs: the one
bench_report.py generates ("i:" and 3,500 "x") and the largest real one. The old
implementation is metacog/signature.py as of REV (default 2b275c9: before `_MAY_VARY`),
loaded from git, under the same output_checksum body. One round of each in turn, medians
per call and their ratio (same run); then whether the two agree on every response, both
the cleaned text and the checksum.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import types
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metacog.event import words
from metacog.perception import signature
from metacog.perception.action import OUTPUT_KEEP, checksum, output_checksum
from metacog.replay import events

DEFAULT_DIR = ROOT.parent / "shared" / "transcripts"
MODULE = "metacog/signature.py"  # its path in the revision compared, before perception/


def bash_responses(folder: Path) -> list[dict]:
    out = []
    for path in sorted(folder.glob("*.jsonl")):
        with open(path, encoding="utf-8", errors="replace") as fh:
            out += [
                p["tool_response"]
                for _, p in events(fh)
                if p.get("hook_event_name") == "PostToolUse"
                and p.get("tool_name") == "Bash"
                and isinstance(p.get("tool_response"), dict)
            ]
    return out


def old_checksum(old: types.ModuleType):
    """action.output_checksum as it is, with the old module's clean."""

    def output_checksum(response: object) -> int:
        if not isinstance(response, dict):
            return checksum(response)
        half = OUTPUT_KEEP // 2
        parts = [
            old.clean(out[:half] + out[-half:] if len(out) > OUTPUT_KEEP else out)
            for out in (words(response, key) for key in ("stdout", "stderr"))
        ]
        return zlib.crc32("\x00".join(parts).encode("utf-8", "replace"))

    return output_checksum


def per_call(fns: dict[str, object], inputs: list, rounds: int) -> dict[str, float]:
    """Median seconds per call of each function, one round of each in turn (noise hits all alike)."""
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            for item in inputs:
                fn(item)
            samples[name].append((time.perf_counter() - start) / len(inputs))
    return {name: statistics.median(s) for name, s in samples.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("transcripts", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--old", default="2b275c9", help="git revision of the old signature.py")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    responses = bash_responses(args.transcripts)
    if not responses:
        print(f"no Bash results in {args.transcripts}/*.jsonl", file=sys.stderr)
        return 2
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{args.old}:{MODULE}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    old = types.ModuleType("signature_old")
    exec(compile(source, "signature_old", "exec"), old.__dict__)  # noqa: S102 - our own file at another commit
    fns = {"old": old_checksum(old), "new": output_checksum}
    size = lambda r: len(words(r, "stdout")) + len(words(r, "stderr"))  # noqa: E731
    sizes = sorted(size(r) for r in responses)
    largest = max(responses, key=size)
    print(
        f"{len(responses)} Bash results from {args.transcripts} (median {sizes[len(sizes) // 2]} "
        f"characters, largest {sizes[-1]}); old = {args.old}:{MODULE}"
    )
    cases = {
        "transcripts' Bash results": responses,
        "bench_report's generated output": [{"stdout": "7:" + "x" * 3500, "stderr": ""}] * 200,
        "the largest real output": [largest] * 200,
    }
    for label, inputs in cases.items():
        t = per_call(fns, inputs, args.rounds)
        print(
            f"{label}: old {t['old'] * 1e6:.1f} us, new {t['new'] * 1e6:.1f} us per call, "
            f"new/old {t['new'] / t['old']:.2f}x (median of {args.rounds} rounds)"
        )
    texts = [words(r, k) for r in responses for k in ("stdout", "stderr")]
    differ = sum(old.clean(t) != signature.clean(t) for t in texts)
    sums = sum(fns["old"](r) != fns["new"](r) for r in responses)
    varying = sum(old._VOLATILE.search(" ".join(t.split())) is not None for t in texts if t)
    print(
        f"different clean(): {differ} of {len(texts)} texts ({varying} of the "
        f"{sum(map(bool, texts))} non-empty ones hold a volatile token); different checksum: "
        f"{sums} of {len(responses)}"
    )
    return 1 if differ or sums else 0


if __name__ == "__main__":
    sys.exit(main())
