"""Display images of the visual reports: made beside the evaluation (``--jobs 1``: a background
thread, in task order; ``--jobs 2``: in the workers), from this run's files, the reference panels once
per scene; the page and figures do not depend on where they were made."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import numpy as np

from pansharp_iqa.cli import runner, scene_eval
from pansharp_iqa.cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reports"))
from report_helpers import Page  # noqa: E402


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_figures_and_page_do_not_depend_on_where_the_displays_are_made(tmp_path, reduced_dataset, rr_methods):
    """--jobs 1 (displays in a thread beside the evaluation) and --jobs 2 (in the workers):
    byte-identical figures and page."""
    folder, _ = reduced_dataset
    np.save(rr_methods["good"] / "s2.npy", np.zeros((64, 64, 4)))  # a failed pair: its scene still has a figure
    args = ["evaluate", str(folder), *map(str, rr_methods.values()), "--format", "html", "--figures"]
    assert main([*args, "--out", str(tmp_path / "j1")]) == 1
    assert main([*args, "--out", str(tmp_path / "j2"), "--jobs", "2"]) == 1
    figures = {k: _files(tmp_path / k / "figures") for k in ("j1", "j2")}
    assert sorted(figures["j1"]) == ["s1.pdf", "s1.png", "s2.pdf", "s2.png", "s3.pdf", "s3.png"]
    assert figures["j1"] == figures["j2"]
    pages = {k: (tmp_path / k / "report.html").read_text().replace(str(tmp_path / k), "OUT") for k in ("j1", "j2")}
    assert pages["j1"] == pages["j2"].replace(" --jobs 2", "")


# ----------------------------------------------------------------------------- the runner
def test_display_images_are_made_beside_the_evaluation_in_task_order(tmp_path, monkeypatch, reduced_dataset,
                                                                      rr_methods):
    from pansharp_iqa.cli import scene_display

    events: list[tuple[str, object]] = []
    real_display, real_evaluate = scene_display.display_from_arrays, scene_eval.evaluate_arrays

    def slow_display(*a, **k):
        time.sleep(0.05)  # slower than an evaluation: the backlog fills
        events.append(("display", threading.current_thread().name))
        return real_display(*a, **k)

    def counted_evaluate(*a, **k):
        events.append(("evaluate", None))
        return real_evaluate(*a, **k)

    monkeypatch.setattr(scene_display, "display_from_arrays", slow_display)
    monkeypatch.setattr(scene_eval, "evaluate_arrays", counted_evaluate)
    import pansharp_iqa.cli.evaluate_command as command

    done: list[tuple[str, str]] = []
    real_run = command.run_tasks

    def spy(tasks, **kwargs):
        on_done = kwargs["on_done"]

        def record(i, outcome):
            assert not hasattr(outcome.display, "result")  # a display, never a future
            done.append((outcome.scene, outcome.method))
            events.append(("done", i))
            on_done(i, outcome)

        order = [(t.scene.name, t.method) for t in tasks]
        result = real_run(tasks, **{**kwargs, "on_done": record})
        assert done == order
        return result

    monkeypatch.setattr(command, "run_tasks", spy)
    folder, _ = reduced_dataset
    assert main(["evaluate", str(folder), *map(str, rr_methods.values()), "--out", str(tmp_path / "o"),
                 "--format", "html"]) == 0
    assert {name for kind, name in events if kind == "display"} == {"display_0"}
    # pair i is reported before pair i + backlog + 1 is evaluated: a few pairs' arrays at most
    evaluations = [k for k, (kind, _) in enumerate(events) if kind == "evaluate"]
    reports = {i: k for k, (kind, i) in enumerate(events) if kind == "done"}
    for i, k in reports.items():
        later = i + runner._DISPLAY_BACKLOG + 1
        if later < len(evaluations):
            assert k < evaluations[later]


def test_large_pairs_make_their_display_images_at_once(tmp_path, monkeypatch, reduced_dataset, rr_methods):
    from pansharp_iqa.cli import scene_display

    threads = []
    real_display = scene_display.display_from_arrays

    def where(*a, **k):
        threads.append(threading.current_thread().name)
        return real_display(*a, **k)

    monkeypatch.setattr(scene_display, "display_from_arrays", where)
    monkeypatch.setattr(scene_eval, "DEFERRED_DISPLAY_BYTES", 1000)  # every pair is "large"
    folder, _ = reduced_dataset
    assert main(["evaluate", str(folder), *map(str, rr_methods.values()), "--out", str(tmp_path / "o"),
                 "--format", "html"]) == 0
    assert threads and set(threads) == {"MainThread"}


def test_a_scene_shows_panels_made_from_this_runs_files(tmp_path, reduced_dataset, rr_methods):
    """A second run in the same process shows the scene as its files are now."""
    folder, scenes = reduced_dataset
    args = ["evaluate", str(folder), *map(str, rr_methods.values()), "--format", "html"]

    def gt_image(out: Path) -> str:
        page = Page((out / "report.html").read_text())
        return [src for alt, src in page.images if alt == "GT: whole scene"][0]  # s1 comes first

    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    sc = dict(scenes["s1"])
    sc["gt"] = sc["gt"].copy()
    sc["gt"][1::2, 1::2] += 400  # pixels the scene's fingerprint grid does not sample
    np.savez(folder / "s1.npz", **sc)
    main([*args, "--out", str(tmp_path / "b")])
    assert gt_image(tmp_path / "a") != gt_image(tmp_path / "b")
