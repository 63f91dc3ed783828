"""``--format html``, ``--figures``, the statistics in the reports, and the demo's report page."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from cli_helpers import BITS, RATIO, make_scene, noisy, write_toml
from pansharp_iqa.cli.main import main
from pansharp_iqa.cli.parser import ALL_FORMATS, build_parser

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reports"))
from report_helpers import Page, external_references  # noqa: E402


def _page(out: Path) -> Page:
    page = Page((out / "report.html").read_text(encoding="utf-8"))
    assert page.errors == []
    return page


def test_html_report_holds_every_image_the_tables_and_the_failures(tmp_path, capsys, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    (rr_methods["bad"] / "s2.mat").unlink()  # one failed pair
    out = tmp_path / "out"
    args = ["evaluate", str(folder), *map(str, rr_methods.values()), "--out", str(out), "--format", "html,json"]
    assert main(args) == 1
    printed = capsys.readouterr().out
    assert f"report: {(out / 'report.html').resolve()}" in printed
    page = _page(out)
    assert external_references(page) == []
    alts = [a for a, _ in page.images]
    assert all(src.startswith("data:image/jpeg;base64,") for _, src in page.images)
    # one image per (scene, method) that was evaluated, and one reference per scene
    assert alts.count("good: whole scene") == 3 and alts.count("bad: whole scene") == 2
    assert alts.count("GT: whole scene") == 3
    assert alts.count("good: residual") == 3 and alts.count("bad: residual") == 2
    text = " ".join(page.text)
    assert "missing result" in text and "s2" in text
    assert "toolbox2020" in text and "s1.npz" in text  # provenance card with the input hashes
    assert "band order of sensor 'none' is unknown" in text  # the fallback is said
    assert "bad (incomplete 2/3)" in text and "incomplete methods are not tested" in text  # no test against one
    assert not (out / "results.md").exists()  # only the formats asked for
    doc = json.loads((out / "results.json").read_text())
    assert doc["statistics"]["indexes"] == {} and doc["summary"]["bad"]["complete"] is False


def test_default_formats_leave_html_out_and_all_includes_it():
    assert "html" in ALL_FORMATS
    assert "html" not in build_parser().parse_args(["evaluate", "d", "r"]).format
    assert "html" in build_parser().parse_args(["evaluate", "d", "r", "--format", "all"]).format


def _many_scenes(tmp_path: Path, n: int, methods: dict[str, float], size: int = 128, bands: int = 4,
                 sensor: str = "QB") -> tuple[Path, list[Path]]:
    folder = tmp_path / "ds"
    folder.mkdir()
    write_toml(folder, sensor=sensor, ratio=RATIO, bits=BITS, resolution="reduced", result_scale="dn")
    dirs = [tmp_path / "res" / m for m in methods]
    for d in dirs:
        d.mkdir(parents=True)
    for i in range(n):
        sc = make_scene(200 + i, size=size, bands=bands)
        np.savez(folder / f"sc{i:02d}.npz", **sc)
        for d, sigma in zip(dirs, methods.values(), strict=True):
            np.save(d / f"sc{i:02d}.npy", noisy(sc["gt"], sigma, 1000 * i + int(sigma)))
    return folder, dirs


def test_statistics_with_10_scenes_equal_scipy_in_json_markdown_and_html(tmp_path):
    folder, dirs = _many_scenes(tmp_path, 10, {"sharp": 5.0, "blurry": 40.0, "close": 6.0})
    out = tmp_path / "out"
    assert main(["evaluate", str(folder), *map(str, dirs), "--out", str(out), "--format", "json,md,html"]) == 0
    doc = json.loads((out / "results.json").read_text())
    per = {m: [doc["scenes"][s][m]["metrics"]["Q2n"] for s in sorted(doc["scenes"])] for m in doc["methods"]}
    st = doc["statistics"]["indexes"]["Q2n"]
    best = max(per, key=lambda m: np.mean(per[m]))
    assert st["best"] == best and st["tested"] and st["scenes"] == 10
    fr = scipy.stats.friedmanchisquare(*per.values())
    assert st["friedman"]["p"] == pytest.approx(float(fr.pvalue), rel=1e-12)
    for m, entry in st["versus_best"].items():
        ref = scipy.stats.wilcoxon(per[m], per[best])
        assert entry["p"] == pytest.approx(float(ref.pvalue), rel=1e-12)
        assert entry["ci95"][0] <= entry["mean_difference"] <= entry["ci95"][1]
    assert st["versus_best"]["blurry"]["p_holm"] < 0.05 and st["versus_best"]["blurry"]["distinguishable"]
    assert doc["statistics"]["bootstrap_resamples"] == 10_000 and doc["statistics"]["bootstrap_seed"] == 0
    md = (out / "results.md").read_text()
    assert "## Statistics across scenes" in md and "### Q2n (higher is better" in md
    assert "| blurry |" in md and "worse than the best" in md
    html_text = (out / "report.html").read_text()
    assert "Friedman χ²" in html_text and "worse than the best" in html_text


def test_report_for_20_scenes_and_5_methods_at_256_stays_under_10_mb(tmp_path):
    # noisy 8-band scenes: the worst case for image compression
    folder, dirs = _many_scenes(tmp_path, 20, {f"m{k}": 5.0 + 15 * k for k in range(5)}, size=256, bands=8,
                                sensor="WV2")
    out = tmp_path / "out"
    assert main(["evaluate", str(folder), *map(str, dirs), "--out", str(out), "--format", "html"]) == 0
    size = (out / "report.html").stat().st_size
    assert size < 10 * 2**20, size
    page = _page(out)
    assert len(page.images) == 20 * (2 * 6 + 5)  # per scene: 6 whole + 6 crops + 5 residual maps
    assert "True colour: bands Red, Green, Blue of sensor 'WV2'" in " ".join(page.text)


def test_figures_and_resume_with_html(tmp_path, reduced_dataset, rr_methods):
    folder, _ = reduced_dataset
    out = tmp_path / "out"
    args = ["evaluate", str(folder), *map(str, rr_methods.values()), "--out", str(out)]
    assert main([*args, "--format", "json"]) == 0
    assert not (out / "report.html").exists() and not (out / "figures").exists()
    # --resume reuses every number and still shows every image (the pairs are read again for display)
    assert main([*args, "--resume", "--format", "json,html", "--figures"]) == 0
    assert json.loads((out / "results.json").read_text())["run"]["resumed"] == 6
    page = _page(out)
    assert sum(a.endswith(": whole scene") for a, _ in page.images) == 3 * 3
    names = sorted(p.name for p in (out / "figures").iterdir())
    assert names == ["s1.pdf", "s1.png", "s2.pdf", "s2.png", "s3.pdf", "s3.png"]


def _tif(path: Path, hwb: np.ndarray) -> None:
    import tifffile

    tifffile.imwrite(path, np.moveaxis(hwb, -1, 0), photometric="minisblack", planarconfig="separate")


@pytest.mark.parametrize("resolution", ["reduced", "full"])
def test_tiled_scenes_are_shown_from_decimated_reads(tmp_path, resolution):
    pytest.importorskip("rasterio")
    import tifffile

    folder = tmp_path / "ds"
    folder.mkdir()
    write_toml(folder, sensor="QB", ratio=RATIO, bits=BITS, resolution=resolution, result_scale="dn")
    res = tmp_path / "res" / "noisy"
    res.mkdir(parents=True)
    sc = make_scene(61, size=320)
    if resolution == "reduced":
        _tif(folder / "a_gt.tif", sc["gt"])
    else:
        _tif(folder / "a_ms.tif", sc["ms"])
        tifffile.imwrite(folder / "a_pan.tif", sc["pan"])
    _tif(res / "a.tif", noisy(sc["gt"], 12.0, 1).round().astype(np.uint16))
    out = tmp_path / "out"
    assert main(["evaluate", str(folder), str(res), "--out", str(out), "--format", "html,json",
                 "--tiled", "always"]) == 0
    page = _page(out)
    alts = [a for a, _ in page.images]
    assert "noisy: whole scene" in alts and "noisy: crop" in alts
    assert ("GT: whole scene" in alts) == (resolution == "reduced")
    assert ("PAN: whole scene" in alts) == (resolution == "full")
    assert "decimated read" in " ".join(page.text)


def test_demo_writes_report_html_and_prints_its_path(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    for resolution in ("reduced", "full"):
        page = _page(out / resolution)
        assert external_references(page) == []
        assert str((out / resolution / "report.html").resolve()) in printed
    alts = [a for a, _ in _page(out / "full").images]
    assert {"MS (EXP): whole scene", "PAN: whole scene", "GSA: whole scene", "GSA: crop"} <= set(alts)


def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.mark.skipif(_browser() is None, reason="no headless browser (chromium) installed")
def test_demo_report_renders_in_a_headless_browser(tmp_path):
    from PIL import Image

    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--no-progress", "--format", "html"]) == 0
    shot = tmp_path / "shot.png"
    cmd = [_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
           f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1280,3000", f"--screenshot={shot}",
           (out / "reduced" / "report.html").resolve().as_uri()]
    subprocess.run(cmd, check=False, capture_output=True, timeout=120)
    assert shot.is_file(), "the browser wrote no screenshot"
    with Image.open(shot) as img:
        pixels = np.asarray(img.convert("RGB"), dtype=float)
    assert pixels.shape[:2] == (3000, 1280)
    assert pixels.std() > 20  # not blank
    # the images were decoded and drawn: text alone darkens ~2 % of the page and has ~1000 colours
    # (anti-aliasing); with the images, ~16 % of the page is dark and it has tens of thousands of colours
    assert (pixels.max(axis=2) < 200).mean() > 0.08
    assert len(np.unique(pixels.reshape(-1, 3)[::7], axis=0)) > 10_000


def test_scene_keeps_its_reference_images_when_the_pair_making_them_fails(tmp_path, reduced_dataset, rr_methods):
    folder, scenes = reduced_dataset
    np.save(rr_methods["good"] / "s1.npy", np.zeros((64, 64, 4)))  # wrong shape: the scene's first pair fails
    out = tmp_path / "out"
    assert main(["evaluate", str(folder), *map(str, rr_methods.values()), "--out", str(out), "--format", "html"]) == 1
    alts = [a for a, _ in _page(out).images]
    assert alts.count("GT: whole scene") == 3 and alts.count("good: whole scene") == 2


def test_references_do_not_depend_on_which_pair_fails(tmp_path):
    """The pair listed first fails before reading anything (its result's header has the wrong
    shape): every scene still shows its GT, once, and every method that was evaluated."""
    folder = tmp_path / "ds"
    folder.mkdir()
    write_toml(folder, sensor="none", ratio=RATIO, bits=BITS, resolution="reduced", result_scale="dn")
    bad, good = tmp_path / "res" / "a_wrong_shape", tmp_path / "res" / "b_good"
    bad.mkdir(parents=True)
    good.mkdir(parents=True)
    for i, name in enumerate(["s1", "s2"]):
        sc = make_scene(70 + i)
        for role in ("gt", "ms", "pan"):
            np.save(folder / f"{name}_{role}.npy", sc[role])
        np.save(bad / f"{name}.npy", np.zeros((64, 64, 4)))
        np.save(good / f"{name}.npy", noisy(sc["gt"], 10.0, i))
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        assert main(["evaluate", str(folder), str(bad), str(good), "--out", str(out), "--format", "html,json",
                     "--jobs", jobs]) == 1
        alts = [a for a, _ in _page(out).images]
        assert alts.count("GT: whole scene") == 2 and alts.count("GT: crop") == 2
        assert alts.count("b_good: whole scene") == 2 and "a_wrong_shape: whole scene" not in alts


def test_resume_reads_reused_pairs_for_display_in_the_worker_pool(tmp_path, monkeypatch, reduced_dataset,
                                                                  rr_methods):
    import pansharp_iqa.cli.evaluate_command as command
    from pansharp_iqa.cli import scene_eval

    folder, _ = reduced_dataset
    out = tmp_path / "out"
    args = ["evaluate", str(folder), *map(str, rr_methods.values()), "--out", str(out)]
    assert main([*args, "--format", "json,html"]) == 0
    first = json.loads((out / "results.json").read_text())
    first_page = [a for a, _ in _page(out).images]
    calls = []
    run_tasks = command.run_tasks

    def spy(tasks, **kwargs):
        calls.append(([t.display_only for t in tasks], kwargs["jobs"]))
        return run_tasks(tasks, **kwargs)

    def no_numbers(*a, **k):
        raise AssertionError("a reused pair was evaluated again")

    monkeypatch.setattr(command, "run_tasks", spy)
    monkeypatch.setattr(scene_eval, "evaluate_arrays", no_numbers)
    assert main([*args, "--resume", "--format", "json,html", "--jobs", "2"]) == 0
    assert calls == [([True] * 6, 2)]  # one display-only task per reused pair, in the --jobs workers
    doc = json.loads((out / "results.json").read_text())
    assert doc["run"]["resumed"] == 6 and doc["scenes"] == first["scenes"] and doc["summary"] == first["summary"]
    assert [a for a, _ in _page(out).images] == first_page
