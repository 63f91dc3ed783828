"""Visual reports made while the run goes on: display images in a background thread (``--jobs 1``)
and each scene's figure and page grid as soon as its last pair is done; the same files as when
made after."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import numpy as np
from scipy import ndimage

from pansharp_iqa.cli import runner, scene_eval
from pansharp_iqa.cli.main import main
from pansharp_iqa.cli.scene_queue import SceneQueue
from pansharp_iqa.reports.display import rgb_bands
from pansharp_iqa.reports.figures import write_scene_figure
from pansharp_iqa.reports.html import render_scene_grid
from pansharp_iqa.reports.pair_display import assemble_scene, forget_scenes, make_pair_display

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reports"))
from report_helpers import Arrays, Page  # noqa: E402


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_figures_and_page_do_not_depend_on_when_or_where_they_are_made(tmp_path, monkeypatch, reduced_dataset,
                                                                         rr_methods):
    """Drawn while the run goes on (--jobs 1: displays in a thread; --jobs 2: in the workers) or all
    after it (the queue never told a pair was done): byte-identical figures and page."""
    folder, _ = reduced_dataset
    np.save(rr_methods["good"] / "s2.npy", np.zeros((64, 64, 4)))  # a failed pair: its scene still has a figure
    args = [str(folder), *map(str, rr_methods.values()), "--format", "html", "--figures"]
    assert main([*args, "--out", str(tmp_path / "j1")]) == 1
    assert main([*args, "--out", str(tmp_path / "j2"), "--jobs", "2"]) == 1
    monkeypatch.setattr(SceneQueue, "pair_done", lambda self, scene, method, display: None)
    assert main([*args, "--out", str(tmp_path / "after")]) == 1
    figures = {k: _files(tmp_path / k / "figures") for k in ("j1", "j2", "after")}
    assert sorted(figures["j1"]) == ["s1.pdf", "s1.png", "s2.pdf", "s2.png", "s3.pdf", "s3.png"]
    assert figures["j1"] == figures["j2"] == figures["after"]
    pages = {k: (tmp_path / k / "report.html").read_text().replace(str(tmp_path / k), "OUT")
             for k in ("j1", "j2", "after")}
    pages["j2"] = pages["j2"].replace(" --jobs 2", "")
    assert pages["j1"] == pages["j2"] == pages["after"]


def _view(scene: str, methods=("a", "b"), seed: int = 0):
    rng = np.random.default_rng(seed)
    rgb = rgb_bands(4, ["Blue", "Green", "Red", "NIR"])
    gt = 300 + 1000 * ndimage.zoom(rng.random((8, 8, 4)), (8, 8, 1), order=1)
    return {m: make_pair_display(Arrays(fused=gt + rng.normal(0, 10.0 * (i + 1), gt.shape), gt=gt), method=m,
                                 resolution="reduced", ratio=4, rgb=rgb) for i, m in enumerate(methods)}


def _wait_for(path: Path, seconds: float = 20.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.is_file():
            return True
        time.sleep(0.01)
    return False


def test_a_scene_is_drawn_once_its_last_pair_is_done(tmp_path):
    d1, d2 = _view("s1", seed=1), _view("s2", seed=2)
    queue = SceneQueue(["a", "b"], tasks=[("s1", "a"), ("s1", "b"), ("s2", "a")],
                       known={("s2", "b"): None},  # s2/b failed before the run: no task
                       figures_dir=tmp_path / "figs", html_scenes={"s2"})
    queue.pair_done("s1", "a", d1["a"])
    time.sleep(0.2)
    assert not (tmp_path / "figs").exists()  # s1 still waits for b
    queue.pair_done("s1", "b", d1["b"])
    assert _wait_for(tmp_path / "figs" / "s1.pdf")  # drawn before the run ends
    queue.pair_done("s2", "a", d2["a"])
    views = {"s1": assemble_scene("s1", ["a", "b"], d1), "s2": assemble_scene("s2", ["a", "b"], {"a": d2["a"]}),
             "s3": None}
    files, grids = queue.finish(views)
    assert [p.name for p in files] == ["s1.png", "s1.pdf", "s2.png", "s2.pdf"]
    again = write_scene_figure(tmp_path / "again", views["s2"])
    assert [p.read_bytes() for p in files[2:]] == [p.read_bytes() for p in again]
    assert grids == {"s2": render_scene_grid(views["s2"])}


def test_finish_draws_the_scenes_no_pair_reported(tmp_path):
    d = _view("s1")
    queue = SceneQueue(["a", "b"], tasks=[], known={}, figures_dir=tmp_path / "figs")
    files, grids = queue.finish({"s1": assemble_scene("s1", ["a", "b"], d)})
    assert [p.name for p in files] == ["s1.png", "s1.pdf"] and all(p.is_file() for p in files) and grids == {}


def test_an_interrupted_run_leaves_no_figures_and_keeps_the_earlier_results(tmp_path, monkeypatch, reduced_dataset,
                                                                             rr_methods):
    import pansharp_iqa.cli.evaluate_command as command

    folder, _ = reduced_dataset
    out = tmp_path / "out"
    args = [str(folder), *map(str, rr_methods.values()), "--out", str(out)]
    assert main([*args, "--format", "json"]) == 0
    before = {k: v for k, v in _files(out).items() if not k.startswith(".")}

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    import pansharp_iqa.cli.scene_queue as scene_queue

    def slow_figure(out_dir, view):
        time.sleep(0.3)  # still drawing when the run is interrupted
        return write_scene_figure(out_dir, view)

    monkeypatch.setattr(scene_queue, "write_scene_figure", slow_figure)
    monkeypatch.setattr(command, "write_reports", interrupted)  # every figure was queued by then
    assert main([*args, "--format", "json", "--figures", "--force"]) == 130
    for thread in threading.enumerate():  # a drawing left running would write after the clean-up
        if thread.name.startswith("scene-reports"):
            thread.join(timeout=10)
    after = _files(out)
    assert {k: v for k, v in after.items() if not k.startswith(".")} == before  # nothing staged is left
    assert not (out / "figures").exists() and [k for k in after if k.startswith(".")] == [".pansharp-eval-manifest.json"]


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
    assert main([str(folder), *map(str, rr_methods.values()), "--out", str(tmp_path / "o"), "--format", "html"]) == 0
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
    assert main([str(folder), *map(str, rr_methods.values()), "--out", str(tmp_path / "o"), "--format", "html"]) == 0
    assert threads and set(threads) == {"MainThread"}


def test_a_scene_shows_panels_made_from_this_runs_files(tmp_path, reduced_dataset, rr_methods):
    """The reference panels are kept per scene within a run, and made afresh by the next run (in
    the same process) even when the edit misses the pixels that fingerprint the scene."""
    folder, scenes = reduced_dataset
    args = [str(folder), *map(str, rr_methods.values()), "--format", "html"]

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


def test_reference_panels_are_made_once_per_scene():
    rgb = rgb_bands(4, ["Blue", "Green", "Red", "NIR"])
    rng = np.random.default_rng(3)
    gt = 300 + 1000 * rng.random((64, 64, 4))
    forget_scenes()
    first = make_pair_display(Arrays(fused=gt + 1, gt=gt), method="a", resolution="reduced", ratio=4, rgb=rgb,
                              scene_key="k")
    second = make_pair_display(Arrays(fused=gt + 2, gt=gt), method="b", resolution="reduced", ratio=4, rgb=rgb,
                               scene_key="k")
    assert second.references is first.references  # kept, not made again
    forget_scenes()
    third = make_pair_display(Arrays(fused=gt + 2, gt=gt), method="b", resolution="reduced", ratio=4, rgb=rgb,
                              scene_key="k")
    assert third.references is not first.references and third.references == first.references
