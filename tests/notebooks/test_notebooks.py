"""The notebooks in ``notebooks/`` run top to bottom and say what they claim.

Each notebook is executed once (nbclient, kernel ``python3``, working directory ``notebooks/``, a
timeout per cell); any cell error fails the test. Facts are then read from the executed notebook:
the JSON its ``summary``-tagged cell prints and the figures it draws. Notebook 3 needs MindSpore
(``pip install '.[nlrnet]'``) and runs as a smoke run (``PANSHARP_SMOKE=1``).

Data: the notebooks read ``imgWV2.mat`` from ``$PANSHARP_SHARED_DATA`` or ``<repo>/../shared/data``
and fall back to a synthetic scene without it; the fallback itself is tested with an empty
data folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
FIVE_SENSORS = ("QB", "IKONOS", "WV2", "WV3", "none")
BASELINES = ("EXP", "BT-H", "GSA", "MTF-GLP-HPM")


def _real_data_present() -> bool:
    env = os.environ.get("PANSHARP_SHARED_DATA")
    folder = Path(env) if env else REPO.parent / "shared" / "data"
    return (folder / "imgWV2.mat").is_file()


def execute(name: str, *, env: dict[str, str] | None = None, timeout: int = 300):
    """Run ``notebooks/<name>`` in a fresh kernel (cwd = notebooks/) and return the executed copy."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    with pytest.MonkeyPatch.context() as mp:
        for key, value in (env or {}).items():
            mp.setenv(key, value)
        client.execute()  # raises CellExecutionError (with the traceback) on any cell error
    return nb


def stdout_of(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def summary_of(nb) -> dict:
    """The JSON printed by the cell tagged ``summary``."""
    cells = [c for c in nb.cells if "summary" in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, "a notebook has exactly one cell tagged 'summary'"
    text = stdout_of(cells[0])
    return json.loads(text[text.index("{"):])


def n_figures(nb) -> int:
    return sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code"
               for o in c.get("outputs", []))


def all_stdout(nb) -> str:
    return "\n".join(stdout_of(c) for c in nb.cells if c.cell_type == "code")


# --------------------------------------------------------------------------- outputs stripped

def _committed_notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def test_there_are_three_notebooks():
    names = [p.name for p in _committed_notebooks()]
    assert names == ["01_quickstart.ipynb", "02_why_numbers_disagree.ipynb", "03_nlrnet.ipynb"]


@pytest.mark.parametrize("path", _committed_notebooks(), ids=lambda p: p.name)
def test_committed_notebook_has_no_outputs(path: Path):
    raw = json.loads(path.read_text(encoding="utf-8"))
    dirty = [i for i, c in enumerate(raw["cells"]) if c["cell_type"] == "code"
             and (c.get("outputs") or c.get("execution_count") is not None)]
    assert not dirty, (f"{path.name}: cells {dirty} hold outputs or execution counts; run "
                       f"`python notebooks/strip_outputs.py` before committing")
    nbformat.validate(nbformat.reads(path.read_text(encoding="utf-8"), as_version=4))
    result = subprocess.run([sys.executable, str(NOTEBOOKS / "strip_outputs.py"), "--check", str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_strip_outputs_script(tmp_path: Path):
    """--check flags a notebook with outputs; stripping removes them and keeps sources and tags."""
    src = nbformat.read(NOTEBOOKS / "01_quickstart.ipynb", as_version=4)
    dirty = nbformat.v4.new_notebook(metadata=dict(src.metadata))
    cell = nbformat.v4.new_code_cell("print(1)", execution_count=3,
                                     outputs=[nbformat.v4.new_output("stream", text="1\n")])
    cell.metadata.update(tags=["summary"], execution={"iopub.status.busy": "2024-01-01T00:00:00Z"})
    dirty.cells = [nbformat.v4.new_markdown_cell("# t"), cell]
    path = tmp_path / "dirty.ipynb"
    nbformat.write(dirty, path)
    script = [sys.executable, str(NOTEBOOKS / "strip_outputs.py")]
    assert subprocess.run([*script, "--check", str(path)], capture_output=True).returncode == 1
    assert subprocess.run([*script, str(path)], capture_output=True).returncode == 0
    assert subprocess.run([*script, "--check", str(path)], capture_output=True).returncode == 0
    clean = json.loads(path.read_text(encoding="utf-8"))
    code = clean["cells"][1]
    assert code["outputs"] == [] and code["execution_count"] is None
    assert code["metadata"] == {"tags": ["summary"]} and "".join(code["source"]) == "print(1)"


# --------------------------------------------------------------------------- 01 quickstart

@pytest.fixture(scope="module")
def nb01():
    return execute("01_quickstart.ipynb")


def test_01_quickstart_numbers(nb01):
    s = summary_of(nb01)
    assert s["data"] == ("real" if _real_data_present() else "synthetic")
    assert s["sensor"] == "WV2"
    assert s["reduced_protocol"] == s["full_protocol"] == "toolbox2020"
    assert set(s["reduced"]) == set(s["full"]) == set(BASELINES)
    for m in BASELINES:
        rr, fr = s["reduced"][m], s["full"][m]
        assert set(rr) == {"Q2n", "Q", "SAM", "ERGAS", "SCC"}
        assert set(fr) == {"D_lambda", "D_s", "QNR", "D_lambda_K", "HQNR"}
        assert 0.0 <= rr["Q2n"] <= 1.0 and 0.0 <= rr["Q"] <= 1.0 and rr["SAM"] >= 0.0
        for k in fr:
            assert 0.0 <= fr[k] <= 1.0, (m, k, fr[k])
        assert fr["QNR"] == pytest.approx((1 - fr["D_lambda"]) * (1 - fr["D_s"]))
        assert fr["HQNR"] == pytest.approx((1 - fr["D_lambda_K"]) * (1 - fr["D_s"]))
    assert s["full"]["EXP"]["D_lambda"] < 1e-9
    if s["data"] == "real":
        for m in ("BT-H", "GSA", "MTF-GLP-HPM"):
            assert s["reduced"][m]["Q2n"] > s["reduced"]["EXP"]["Q2n"] + 0.1
            assert s["reduced"][m]["ERGAS"] < s["reduced"]["EXP"]["ERGAS"]
    # the 256 px reference minus the 20/21 px cut: 215 px, SAM per pixel, Q2n per 32 px block
    if s["data"] == "real":
        assert s["sam_map_shape"] == [215, 215]
    assert len(s["q2n_map_shape"]) == 2 and min(s["q2n_map_shape"]) >= 2


def test_01_quickstart_figures_and_card(nb01):
    assert n_figures(nb01) >= 6  # overview, 2 reduced-resolution crops, maps, 2 full-resolution crops
    text = all_stdout(nb01)
    assert '"name": "toolbox2020"' in text and '"q2n_cast"' in text  # the printed protocol card


def test_01_quickstart_synthetic_fallback(tmp_path: Path):
    nb = execute("01_quickstart.ipynb", env={"PANSHARP_SHARED_DATA": str(tmp_path)})
    s = summary_of(nb)
    assert s["data"] == "synthetic"
    assert "SYNTHETIC" in all_stdout(nb)
    assert all(0.0 <= s["reduced"][m]["Q2n"] <= 1.0 for m in BASELINES)


# --------------------------------------------------------------------------- 02 why numbers disagree

@pytest.fixture(scope="module")
def nb02():
    return execute("02_why_numbers_disagree.ipynb")


def test_02_protocols(nb02):
    s = summary_of(nb02)
    assert s["data"] == ("real" if _real_data_present() else "synthetic")
    fr = s["protocols_full"]
    assert set(fr) == {"toolbox2020", "toolbox2015", "qnr-paper"}
    assert "HQNR" in fr["toolbox2020"] and "HQNR" not in fr["toolbox2015"]
    qnrs = [fr[p]["QNR"] for p in fr]
    assert all(0.0 <= q <= 1.0 for q in qnrs)
    assert max(qnrs) - min(qnrs) > 0.005  # the same image, different numbers
    # D_lambda against the upsampled MS is the same in both toolboxes; their D_s differ
    assert fr["toolbox2020"]["D_lambda"] == pytest.approx(fr["toolbox2015"]["D_lambda"])
    assert fr["toolbox2020"]["D_s"] != pytest.approx(fr["toolbox2015"]["D_s"], abs=1e-4)
    rr = s["protocols_reduced"]
    assert rr["toolbox2020"]["Q2n"] == pytest.approx(rr["toolbox2015"]["Q2n"])
    assert rr["toolbox2020"]["SCC"] != pytest.approx(rr["toolbox2015"]["SCC"], abs=1e-4)


def test_02_sensor_sensitivity(nb02):
    s = summary_of(nb02)
    table = s["sensor_sensitivity"]
    assert set(table) == {"toolbox2020", "toolbox2015"}
    for proto, rows in table.items():
        assert len(rows) == 5
        assert [k.split("[")[0] for k in rows] == list(FIVE_SENSORS), proto
        for vals in rows.values():
            assert all(0.0 <= v <= 1.0 for v in vals.values())
    t20, t15 = table["toolbox2020"], table["toolbox2015"]
    # toolbox2020: D_lambda and D_s do not depend on the sensor, D_lambda_K (hence HQNR) does
    assert len({round(v["D_s"], 12) for v in t20.values()}) == 1
    assert len({round(v["D_lambda"], 12) for v in t20.values()}) == 1
    assert len({round(v["D_lambda_K"], 6) for v in t20.values()}) >= 3
    # toolbox2015: D_s uses the sensor's PAN MTF
    assert len({round(v["D_s"], 6) for v in t15.values()}) >= 3
    # the library refuses a 4-band sensor for 8-band data instead of guessing
    assert "select_bands" in s["qb_on_8_bands_error"]
    assert n_figures(nb02) >= 3


def test_02_rounding(nb02):
    s = summary_of(nb02)
    r = s["rounding"]
    assert "scale" in r["unit_data_error"]  # [0, 1] data refused with the fix in the message
    assert r["q2n_unit_scaled"] == pytest.approx(r["q2n_dn"], abs=1e-12)
    assert r["q2n_cast_unit"] < r["q2n_dn"] - 0.1  # casting [0, 1] data to integers ruins Q2n


# --------------------------------------------------------------------------- 03 NLRNet

def test_03_nlrnet_smoke():
    pytest.importorskip("mindspore")
    nb = execute("03_nlrnet.ipynb", env={"PANSHARP_SMOKE": "1"}, timeout=900)
    s = summary_of(nb)
    assert s["smoke"] is True
    assert s["data"] == ("real" if _real_data_present() else "synthetic")
    table = s["pansharp_eval"]
    assert set(table) == {*BASELINES, "NLRNet"}
    for m, vals in table.items():
        assert 0.0 <= vals["Q2n"] <= 1.0 and vals["SAM"] >= 0.0, m
    # pansharp-eval and infer's own scoring agree (same core; the result file is float32)
    for k in ("Q2n", "Q", "SAM", "ERGAS", "SCC"):
        assert table["NLRNet"][k] == pytest.approx(s["nlrnet_infer_metrics"][k], rel=1e-6, abs=1e-6), k
    assert s["train_steps"] >= 1 and all(v == v for v in s["losses"])  # finite, not NaN
    assert n_figures(nb) >= 3
