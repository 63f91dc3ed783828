"""Issue 27, item 10: SIGTERM (``kill``, ``timeout``, SLURM, ``docker stop``) ends a run as Ctrl-C
does: exit 130, the manifest ``interrupted`` (never ``running``), no staging folder, the earlier
results kept, and no worker process left behind with ``--jobs 2``. Real processes: a signal from
outside is the point."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_helpers import cli_command
from pansharp_iqa.cli.output_dir import MANIFEST_NAME

#: A module the run and its spawned workers both import: each pair first records the process it
#: runs in, then waits far longer than the test (so only a signal ends the run).
SLOW_MODULE = """
import os, time
from pathlib import Path
from pansharp_iqa.cli.scene_eval import evaluate_scene

def slow(task, **kw):
    Path(os.environ["SLOW_PIDS"], f"{os.getpid()}-{time.monotonic_ns()}").touch()
    time.sleep(600)
    return evaluate_scene(task, **kw)
"""
PRELUDE = "import slow_pairs\nimport pansharp_iqa.cli.runner as runner\nrunner.evaluate_scene = slow_pairs.slow\n"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")  # a zombie (dead, not yet reaped by init) is not running
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[-1].split()[0] == "Z")


def _default_sigint() -> None:
    """In the child before exec: SIGINT back to its default. A shell that runs the test suite in the background (no
    job control: CI scripts, ``cmd &``) starts it with SIGINT ignored, which a child inherits and Python then keeps
    (no KeyboardInterrupt); the run under test is a user's command in a terminal, where Ctrl-C is not ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_until(predicate, seconds: float, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.05)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("sig,jobs,group", [
    (signal.SIGTERM, 1, False), (signal.SIGTERM, 2, False), (signal.SIGTERM, 2, True), (signal.SIGINT, 2, False),
])
def test_a_signal_ends_the_run_as_interrupted_with_no_worker_left(tmp_path, reduced_dataset, rr_methods,
                                                                  sig, jobs, group):
    folder, _ = reduced_dataset
    out, pids, modules = tmp_path / "out", tmp_path / "pids", tmp_path / "modules"
    pids.mkdir()
    modules.mkdir()
    (modules / "slow_pairs.py").write_text(SLOW_MODULE)
    args = ["evaluate", folder, *rr_methods.values(), "--out", out, "--format", "csv,json", "--no-progress"]
    assert subprocess.run(cli_command(*args), capture_output=True).returncode == 0  # an earlier, complete run
    earlier = (out / "results.csv").read_bytes()
    path = os.pathsep.join(filter(None, [str(modules), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "SLOW_PIDS": str(pids)}
    # group=True: the signal goes to the whole process group, workers included (as `timeout` sends it)
    run = subprocess.Popen(cli_command(*args, "--force", "--jobs", jobs, prelude=PRELUDE), env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=group,
                           preexec_fn=_default_sigint)
    workers: set[int] = set()
    try:
        _wait_until(lambda: len(list(pids.iterdir())) >= jobs, 120, run)  # every worker is inside a pair
        workers = {int(p.name.split("-")[0]) for p in pids.iterdir()} - {run.pid}
        assert len(workers) == (jobs if jobs > 1 else 0)
        if group:
            os.killpg(run.pid, sig)
        else:
            run.send_signal(sig)
        code = run.wait(timeout=60)
        _, err = run.communicate()
        assert code == 130 and err.strip().splitlines()[-1] == "pansharp-eval: interrupted", err
        assert "Traceback" not in err, err
        manifest = json.loads((out / MANIFEST_NAME).read_text())
        assert manifest["status"] == "interrupted" and manifest["staging"] is None
        assert not [p for p in out.iterdir() if p.name.startswith(".pansharp-eval-staging")]
        assert (out / "results.csv").read_bytes() == earlier  # the earlier complete run's reports are kept
        deadline = time.monotonic() + 15
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in workers if _alive(pid)], "worker processes left running"
    finally:  # a failing test leaves no process behind either
        for pid in [run.pid, *workers]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        run.wait(timeout=60)

def test_sigterm_outside_a_run_keeps_its_default(tmp_path, capsys, reduced_dataset, rr_methods):
    """The handler lives only while a run holds its folder; in-process runs restore the caller's."""
    from pansharp_iqa.cli.main import main

    folder, _ = reduced_dataset
    before = signal.getsignal(signal.SIGTERM)
    assert main(["evaluate", str(folder), str(rr_methods["good"]), "--out", str(tmp_path / "o"), "--no-progress"]) == 0
    assert signal.getsignal(signal.SIGTERM) is before
