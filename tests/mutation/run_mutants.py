#!/usr/bin/env python3
"""Mutation check: does the suite fail when one number of the package is wrong?

Applies each one-line mutant of ``mutants.toml`` (beside this script), one at a time, to a COPY of
the repository (never in place), runs the tests that must catch it there and prints the score
(caught / total) and the mutants that survived. Run it before a release, outside CI (it takes
about 10 minutes on 2 cores for 48 mutants); see ``docs/architecture.md`` ("Before a release").

    python tests/mutation/run_mutants.py                 # every mutant, its tests in 1 process each
    python tests/mutation/run_mutants.py --workers 2     # pytest-xdist, 2 workers per mutant
    python tests/mutation/run_mutants.py --only summary-nan-skip q2n-cast-rounding
    python tests/mutation/run_mutants.py --check         # only check that the list matches the code

Each mutant names a file, the exact ``original`` text (a unique substring of one line), its
``replacement`` and the ``tests`` (pytest paths or node ids) that must catch it. When an original
text is no longer found exactly once, the script stops before running anything and names every
such mutant: the code changed, so the list must be updated (never skipped silently).

The copy has no ``../shared/data`` beside it and ``PANSHARP_SHARED_DATA`` is unset (unless
``--shared-data``), so every mutant must be caught by a synthetic test. Exit status: 0 when every
mutant is caught, 1 when one survived (or its tests broke), 2 when the list does not match the code
or the tests fail without any mutant.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser as the tomli package
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
LIST = HERE / "mutants.toml"


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One one-line mutant of mutants.toml."""

    id: str
    file: str
    original: str
    replacement: str
    tests: tuple[str, ...]
    why: str = ""


class ListError(Exception):
    """mutants.toml does not match the code (or is malformed)."""


def load(path: Path = LIST, repo: Path = REPO) -> list[Mutant]:
    """The mutants of ``path``, each checked against the code of ``repo`` (every problem at once)."""
    try:
        entries = tomllib.loads(path.read_text(encoding="utf-8")).get("mutant", [])
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ListError(f"{path}: {exc}") from None
    mutants, problems, seen = [], [], set()
    for n, entry in enumerate(entries, start=1):
        unknown = set(entry) - {"id", "file", "original", "replacement", "tests", "why"}
        missing = {"id", "file", "original", "replacement", "tests"} - set(entry)
        where = f"mutant {n} ({entry.get('id', '?')})"
        if unknown or missing:
            problems.append(f"{where}: missing {sorted(missing)}, unknown {sorted(unknown)}")
            continue
        m = Mutant(entry["id"], entry["file"], entry["original"], entry["replacement"], tuple(entry["tests"]),
                   entry.get("why", ""))
        if m.id in seen:
            problems.append(f"{where}: id used twice")
        seen.add(m.id)
        if "\n" in m.original or "\n" in m.replacement or m.original == m.replacement or not m.tests:
            problems.append(f"{where}: original and replacement must be different single lines, tests non-empty")
            continue
        target = repo / m.file
        if not target.is_file():
            problems.append(f"{where}: {m.file} no longer exists: update the list")
            continue
        count = target.read_text(encoding="utf-8").count(m.original)
        if count != 1:
            problems.append(f"{where}: {m.file} holds the original text {m.original!r} {count} times (must be "
                            "exactly once): the code changed, update the list")
        for t in m.tests:
            if not (repo / t.split("::")[0]).exists():
                problems.append(f"{where}: test {t} no longer exists: update the list")
        mutants.append(m)
    if problems:
        raise ListError("mutants.toml does not match the code:\n  " + "\n  ".join(problems))
    return mutants


def copy_repository(repo: Path, dest: Path) -> Path:
    """The checkout's tracked and untracked-but-not-ignored files, copied to ``dest/repo``."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=repo,
                           check=True, capture_output=True).stdout.split(b"\0")
    root = dest / "repo"
    for name in filter(None, files):
        src = repo / os.fsdecode(name)
        if src.is_file():
            (root / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, root / os.fsdecode(name))
    return root


def environment(copy: Path, shared_data: bool) -> dict[str, str]:
    """The tests' environment: the copy's package first on the path, no real data unless asked."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(copy), os.environ.get("PYTHONPATH")])),
           "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PANSHARP_EXPECT_INSTALLED", None)
    if not shared_data:
        env.pop("PANSHARP_SHARED_DATA", None)
    return env


def pytest_command(tests: list[str], workers: int) -> list[str]:
    parallel = ["-n", str(workers), "--dist", "loadfile"] if workers > 1 else ["-n", "0"]
    return [sys.executable, "-m", "pytest", "-x", "-q", "-rfE", "-p", "no:cacheprovider", "-o", "addopts=",
            *parallel, *tests]


def run_tests(copy: Path, tests: list[str], env: dict[str, str], workers: int, timeout: float
              ) -> tuple[int | None, str]:
    """pytest's exit status (None: timed out) and its output."""
    try:
        done = subprocess.run(pytest_command(tests, workers), cwd=copy, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return None, out
    return done.returncode, done.stdout + done.stderr


def first_failure(output: str) -> str:
    found = re.search(r"^(?:FAILED|ERROR) (\S+)", output, re.M)
    return found[1] if found else "?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="ID", help="run these mutants only")
    parser.add_argument("--workers", type=int, default=0, help="pytest-xdist workers per mutant (0: one process)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per mutant (a timeout counts as caught)")
    parser.add_argument("--check", action="store_true", help="check the list against the code, run nothing")
    parser.add_argument("--skip-baseline", action="store_true", help="do not run the tests once without mutants")
    parser.add_argument("--shared-data", action="store_true", help="keep PANSHARP_SHARED_DATA (real-data tests)")
    parser.add_argument("--list", type=Path, default=LIST, help="the mutants file (default: mutants.toml)")
    args = parser.parse_args(argv)
    try:
        mutants = load(args.list)
    except ListError as exc:
        print(f"run_mutants: {exc}", file=sys.stderr)
        return 2
    if args.only:
        unknown = sorted(set(args.only) - {m.id for m in mutants})
        if unknown:
            print(f"run_mutants: unknown mutant ids: {', '.join(unknown)}", file=sys.stderr)
            return 2
        mutants = [m for m in mutants if m.id in args.only]
    print(f"{len(mutants)} mutants in {len(sorted({m.file for m in mutants}))} files: the list matches the code")
    if args.check:
        return 0
    with tempfile.TemporaryDirectory(prefix="pansharp-mutants-") as tmp:
        copy = copy_repository(REPO, Path(tmp))
        env = environment(copy, args.shared_data)
        probe = subprocess.run([sys.executable, "-c", "import pansharp_iqa; print(pansharp_iqa.__file__)"],
                               cwd=copy, env=env, capture_output=True, text=True)
        if not probe.stdout.strip().startswith(str(copy)):
            found = probe.stdout.strip() or probe.stderr
            print(f"run_mutants: the tests would not import the copy's package ({found})", file=sys.stderr)
            return 2
        if not args.skip_baseline:
            union = sorted({t for m in mutants for t in m.tests})
            t0 = time.monotonic()
            code, out = run_tests(copy, union, env, args.workers, args.timeout * 2)
            if code != 0:
                print(out[-4000:])
                print(f"run_mutants: the covering tests fail WITHOUT any mutant (exit {code}, "
                      f"{first_failure(out)}): fix them first", file=sys.stderr)
                return 2
            print(f"baseline: the {len(union)} test selections pass without mutants ({time.monotonic() - t0:.0f} s)")
        caught, survived, broken = [], [], []
        for i, m in enumerate(mutants, start=1):
            target = copy / m.file
            original = target.read_text(encoding="utf-8")
            mutated = original.replace(m.original, m.replacement, 1)
            target.write_text(mutated, encoding="utf-8")
            t0 = time.monotonic()
            try:
                compile(mutated, str(target), "exec")  # a mutant that is not Python is no catch
                code, out = run_tests(copy, list(m.tests), env, args.workers, args.timeout)
            except SyntaxError as exc:
                code, out = -1, f"the mutant is not valid Python: {exc}"
            finally:
                target.write_text(original, encoding="utf-8")
            took = time.monotonic() - t0
            if code == 1 or code is None:
                caught.append(m)
                how = "timed out" if code is None else f"by {first_failure(out)}"
                print(f"[{i}/{len(mutants)}] caught   {m.id} ({took:.0f} s) {how}", flush=True)
            elif code == 0:
                survived.append(m)
                print(f"[{i}/{len(mutants)}] SURVIVED {m.id} ({took:.0f} s): {m.file}: {m.original!r} -> "
                      f"{m.replacement!r}", flush=True)
            else:
                broken.append(m)
                print(f"[{i}/{len(mutants)}] BROKEN   {m.id}: pytest exit {code}\n{out[-2000:]}", flush=True)
    total = len(mutants)
    print(f"\nscore: {len(caught)}/{total} caught ({100.0 * len(caught) / max(total, 1):.1f} %)")
    for m in survived:
        print(f"  survived: {m.id}: {m.file}: {m.original!r} -> {m.replacement!r} (tests: {', '.join(m.tests)})")
    for m in broken:
        print(f"  broken (the mutant or its tests do not run; not a catch): {m.id}")
    return 0 if len(caught) == total else 1


if __name__ == "__main__":
    sys.exit(main())
