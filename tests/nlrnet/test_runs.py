"""Runs that cannot be damaged: arguments checked before writing, SIGINT saves a resumable state."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ms = pytest.importorskip("mindspore")

import numpy as np  # noqa: E402

from pansharp_iqa.nlrnet.config import make_config  # noqa: E402
from pansharp_iqa.nlrnet.train import train  # noqa: E402


def _cfg(data, out, **kw):
    base = {"data": str(data), "out": str(out), "epochs": 1, "batch_size": 4, "blocks": 1,
            "progress": False, "mode": "pynative"}
    base.update(kw)
    return make_config(base)


def _snapshot(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_existing_run_is_never_damaged(tiny_h5, tmp_path):
    run = tmp_path / "run"
    train(_cfg(tiny_h5, run))
    before = _snapshot(run)
    assert {"config.toml", "steps.jsonl", "metrics.jsonl", "last.ckpt", "state.json"} <= set(before)
    with pytest.raises(ValueError, match="--batch-size 64"):
        train(_cfg(tiny_h5, run, batch_size=64), force=True)  # bad argument: checked first
    with pytest.raises(ValueError, match="--resume"):
        train(_cfg(tiny_h5, run))                            # existing run, no --resume/--force
    assert _snapshot(run) == before
    (run / "notes.txt").write_text("mine")
    train(_cfg(tiny_h5, run, epochs=2), force=True)          # starts over, keeps foreign files
    assert (run / "notes.txt").read_text() == "mine"
    steps = [json.loads(x)["step"] for x in (run / "steps.jsonl").read_text().splitlines()]
    assert steps == [1, 2, 3, 4]


def _manifest(run: Path) -> list:
    from pansharp_iqa.nlrnet.train import MANIFEST

    return json.loads((run / MANIFEST).read_text())["files"]


def test_force_deletes_only_what_a_run_recorded(tiny_h5, tiny_val_h5, tmp_path):
    # a folder holding the user's own config.toml (no run recorded writing it): --force refuses,
    # since the new run would replace it, and deletes nothing
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "config.toml").write_text("# my notes\n")
    (mine / "best.ckpt").write_bytes(b"my model")
    with pytest.raises(ValueError, match="config.toml, which no run recorded writing"):
        train(_cfg(tiny_h5, mine), force=True)
    assert (mine / "config.toml").read_text() == "# my notes\n" and (mine / "best.ckpt").exists()

    # a run without --val never writes best.ckpt: the user's best.ckpt there is kept by --force
    run = tmp_path / "run"
    train(_cfg(tiny_h5, run))
    assert sorted(_manifest(run)) == sorted(["config.toml", "steps.jsonl", "metrics.jsonl",
                                             "last.ckpt", "last_net.ckpt", "state.json"])
    (run / "best.ckpt").write_bytes(b"my model")
    train(_cfg(tiny_h5, run, epochs=2), force=True)
    assert (run / "best.ckpt").read_bytes() == b"my model"
    assert len((run / "steps.jsonl").read_text().splitlines()) == 4  # started over: 2 x 2 steps
    assert "best.ckpt" not in _manifest(run)
    # a new run with --val would replace that best.ckpt: refused, nothing deleted
    before = _snapshot(run)
    with pytest.raises(ValueError, match="best.ckpt, which no run recorded writing"):
        train(_cfg(tiny_h5, run, val=str(tiny_val_h5)), force=True)
    assert _snapshot(run) == before
    # the run's own best.ckpt is recorded (and replaced by the next --force)
    (run / "best.ckpt").unlink()
    train(_cfg(tiny_h5, run, val=str(tiny_val_h5)), force=True)
    assert "best.ckpt" in _manifest(run) and (run / "best.ckpt").read_bytes() != b"my model"


def test_force_never_touches_the_config_file(tiny_h5, tmp_path, capsys):
    from pansharp_iqa.nlrnet.cli import main

    run = tmp_path / "run"
    train(_cfg(tiny_h5, run))
    before = _snapshot(run)
    capsys.readouterr()
    assert main(["train", "--config", str(run / "config.toml"), "--out", str(run), "--force",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "copy it out of" in err[0]
    assert _snapshot(run) == before


def test_the_device_is_probed_once(tiny_h5, tmp_path, monkeypatch):
    from pansharp_iqa.nlrnet import env

    calls = []
    real = env.require_device
    monkeypatch.setattr(env, "require_device", lambda d: (calls.append(d), real(d))[1])
    train(_cfg(tiny_h5, tmp_path / "run"), max_steps=1)
    assert calls == ["CPU"]


def test_bad_arguments_create_nothing(tiny_h5, tmp_path):
    with pytest.raises(ValueError, match="more than the 8 patches"):
        train(_cfg(tiny_h5, tmp_path / "new", batch_size=16))
    with pytest.raises(FileNotFoundError):
        train(_cfg(tmp_path / "missing.h5", tmp_path / "new"))
    with pytest.raises(ValueError, match="no resumable state"):
        train(_cfg(tiny_h5, tmp_path / "new"), resume=True)
    assert not (tmp_path / "new").exists()


def test_sigint_saves_a_resumable_state(tiny_h5, tmp_path):
    run = tmp_path / "run"
    env = {**os.environ, "ONEDNN_MAX_CPU_ISA": "AVX2", "GLOG_v": "3"}
    cmd = [sys.executable, "-m", "pansharp_iqa.nlrnet", "train", "--data", str(tiny_h5), "--out",
           str(run), "--epochs", "200", "--batch-size", "2", "--blocks", "1", "--mode", "pynative",
           "--no-progress"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    steps = run / "steps.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if steps.is_file() and len(steps.read_text().splitlines()) >= 6:
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()[1][-2000:]
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    lines = [x for x in err.splitlines() if x.startswith("pansharp-nlrnet")]
    assert len(lines) == 1 and "resumable state saved" in lines[0] and f"--resume {run}" in lines[0]
    assert "Traceback" not in err
    state = json.loads((run / "state.json").read_text())
    done = state["step"]
    assert done >= 6 and state["epoch"] * 4 + state["batch"] == done  # 4 steps per epoch
    # the step running when the signal came may be logged beyond the saved state: resume drops it
    resumed_epochs = state["epoch"] + 2
    train(_cfg(tiny_h5, run, epochs=resumed_epochs), resume=True)
    logged = [json.loads(x) for x in steps.read_text().splitlines()]
    assert [r["step"] for r in logged] == list(range(1, 4 * resumed_epochs + 1))  # no duplicates
    full = train(_cfg(tiny_h5, tmp_path / "full", epochs=resumed_epochs, batch_size=2))
    np.testing.assert_allclose([r["loss"] for r in logged], full["losses"], rtol=1e-6)
    metrics = [json.loads(x)["epoch"] for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert metrics == list(range(1, resumed_epochs + 1))


def test_cli_errors_are_one_line(tiny_h5, tmp_path, capsys):
    from nlrnet_helpers import random_scene, write_scene_mat
    from pansharp_iqa.nlrnet import env
    from pansharp_iqa.nlrnet.cli import main

    notes = tmp_path / "notes.txt"
    notes.write_text("not data")
    garbage_h5 = tmp_path / "garbage.h5"
    garbage_h5.write_bytes(b"not an HDF5 file" * 8)
    bad_mat = tmp_path / "bad.mat"
    bad_mat.write_bytes(b"")  # scipy: MatReadError
    ms_, _ = random_scene(8, 8)
    v73_no_pan = write_scene_mat(tmp_path / "v73.mat", ms_, None, mat73=True)  # MATLAB v7.3, no I_PAN
    cases = [
        ["train", "--data", str(tiny_h5), "--out", str(tmp_path / "r"), "--batch-size", "64"],
        ["train", "--data", str(tmp_path / "nope.h5"), "--out", str(tmp_path / "r")],
        ["train", "--data", str(notes), "--out", str(tmp_path / "r")],
        ["train", "--data", str(garbage_h5), "--out", str(tmp_path / "r")],
        ["train", "--resume", str(tmp_path / "r")],
        ["infer", "--ckpt", str(tmp_path / "none.ckpt"), "--data", str(tiny_h5), "--out", str(tmp_path / "o")],
        ["infer", "--ckpt", "m.ckpt", "--out", str(tmp_path / "o")],
        ["infer", "--ckpt", "m.ckpt", "--data", str(notes), "--out", str(tmp_path / "o")],
        ["infer", "--ckpt", "m.ckpt", "--data", str(garbage_h5), "--out", str(tmp_path / "o")],
        ["prepare", str(bad_mat), "--out", str(tmp_path / "p.h5")],
        ["prepare", str(v73_no_pan), "--out", str(tmp_path / "p.h5")],
        ["prepare", str(bad_mat), "--out", str(tmp_path / "p.txt")],
        ["prepare", str(bad_mat), "--out", str(tmp_path / "p.h5"), "--val-out", str(tmp_path / "p.h5"),
         "--val-fraction", "0.5"],
        ["convert", "--from-torch", str(tiny_h5), "--out", str(tmp_path / "c.ckpt")],
    ]
    if not env.device_available("GPU"):
        cases.append(["train", "--data", str(tiny_h5), "--out", str(tmp_path / "g"), "--device", "GPU"])
    for argv in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        mine = [x for x in err if x.startswith("pansharp-nlrnet")]
        assert len(mine) == 1 and "error:" in mine[0] and "Traceback" not in "\n".join(err), (argv, err)
    assert not (tmp_path / "r").exists() and not (tmp_path / "g").exists()
    assert not (tmp_path / "o").exists() and not (tmp_path / "p.h5").exists()


def test_gpu_on_a_cpu_install_is_one_line(tmp_path):
    from pansharp_iqa.nlrnet import env

    if env.device_available("GPU"):
        pytest.skip("this MindSpore can use a GPU")
    with pytest.raises(ValueError, match="cannot use GPU") as info:
        env.require_device("GPU")
    assert "\n" not in str(info.value)


def test_mindir_tile_mismatch_is_one_line(tmp_path, capsys):
    from nlrnet_helpers import synthetic_arrays, write_h5
    from pansharp_iqa.nlrnet.checkpoint import save_network
    from pansharp_iqa.nlrnet.cli import main
    from pansharp_iqa.nlrnet.model import NLRNet

    save_network(NLRNet(bands=8, blocks=1, features=8, released_unused=False), tmp_path / "m.ckpt",
                 {"sensor": "WV2", "ratio": 4, "bits": 11, "train_patch": 96})
    assert main(["export", "--ckpt", str(tmp_path / "m.ckpt"), "--out", str(tmp_path / "m.mindir")]) == 0
    gt, lms, pan = synthetic_arrays(1, 80, seed=3)
    h5 = write_h5(tmp_path / "v.h5", gt, lms, pan)
    capsys.readouterr()
    assert main(["infer", "--ckpt", str(tmp_path / "m.mindir"), "--data", str(h5),
                 "--out", str(tmp_path / "o")]) == 2
    assert "exported for 96 px tiles" in capsys.readouterr().err
    assert main(["infer", "--ckpt", str(tmp_path / "m.mindir"), "--data", str(h5), "--tile", "64",
                 "--out", str(tmp_path / "o")]) == 2
    assert "--tile 64" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    ms.set_context(mode=ms.PYNATIVE_MODE)


def test_fused_sparse_adam_line_is_silenced():
    # MindSpore logs the deprecation once per process: check in fresh ones, with a control
    code = ("import os; os.environ['ONEDNN_MAX_CPU_ISA'] = 'AVX2'\n"
            "import mindspore as ms; from mindspore import nn\n"
            "from pansharp_iqa.nlrnet import env\n"
            "if {silence}: env.silence_deprecations()\n"
            "nn.Adam(nn.Dense(2, 2).trainable_params())\n"
            "ms.log.warning('other MindSpore messages still pass')\n")
    err = {}
    for silence in (False, True):
        proc = subprocess.run([sys.executable, "-c", code.format(silence=silence)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        err[silence] = proc.stderr
    assert "FusedSparseAdam" in err[False]
    assert "FusedSparseAdam" not in err[True]
    assert "other MindSpore messages still pass" in err[True]


def test_steps_logged_after_the_saved_state_are_dropped_on_resume(tiny_h5, tmp_path):
    # a run that stops without saving (crash, kill -9, --max-steps inside an epoch) leaves steps
    # in steps.jsonl beyond its last saved state; --resume must not log them twice
    run = tmp_path / "run"
    train(_cfg(tiny_h5, run, epochs=2, batch_size=2), max_steps=6)  # epoch 1 saved, 2 steps of epoch 2 not
    assert len((run / "steps.jsonl").read_text().splitlines()) == 6
    assert json.loads((run / "state.json").read_text())["step"] == 4
    train(_cfg(tiny_h5, run, epochs=2), resume=True)
    logged = [json.loads(x) for x in (run / "steps.jsonl").read_text().splitlines()]
    assert [r["step"] for r in logged] == list(range(1, 9))
    full = train(_cfg(tiny_h5, tmp_path / "full", epochs=2, batch_size=2))
    np.testing.assert_allclose([r["loss"] for r in logged], full["losses"], rtol=1e-6)
