"""Data parallelism: 2 CPU workers under msrun (loopback, mccl) == one process with the global batch."""

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ms = pytest.importorskip("mindspore")

import numpy as np  # noqa: E402

import pansharp_iqa.nlrnet as nl  # noqa: E402
from pansharp_iqa.nlrnet.config import make_config  # noqa: E402
from pansharp_iqa.nlrnet.train import train  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_workers_match_single_process(tiny_h5, tmp_path):
    msrun = shutil.which("msrun") or str(Path(sys.executable).parent / "msrun")
    if not Path(msrun).exists():
        pytest.skip("msrun not installed")
    script = Path(nl.__file__).with_name("__main__.py")
    # msrun starts workers with the first ``python`` on PATH: make it this interpreter
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {**os.environ, "PATH": path, "ONEDNN_MAX_CPU_ISA": "AVX2", "GLOG_v": "3"}
    cmd = [msrun, "--worker_num=2", "--local_worker_num=2", "--master_addr=127.0.0.1",
           f"--master_port={_free_port()}", "--join=True", f"--log_dir={tmp_path / 'logs'}",
           "--cluster_time_out=90", str(script), "train", "--data", str(tiny_h5),
           "--out", str(tmp_path / "dp"), "--epochs", "1", "--batch-size", "2", "--blocks", "1",
           "--mode", "pynative", "--distributed", "--no-progress"]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        pytest.fail("msrun did not finish within 180 s")
    logs = "\n".join(p.read_text(errors="replace")[-2000:] for p in (tmp_path / "logs").glob("*.log"))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:] + logs
    single = train(make_config({"data": str(tiny_h5), "out": str(tmp_path / "sp"), "epochs": 1,
                                "batch_size": 4, "blocks": 1, "mode": "pynative",
                                "progress": False}))
    assert len(single["losses"]) == 2
    dp = ms.load_checkpoint(str(tmp_path / "dp" / "last_net.ckpt"))
    sp = ms.load_checkpoint(str(tmp_path / "sp" / "last_net.ckpt"))
    for name in ("conv_input.weight", "residual.0.conv1.weight", "conv_out2.weight"):
        np.testing.assert_allclose(dp[name].asnumpy(), sp[name].asnumpy(), atol=2e-6, rtol=1e-4)
    # the updates are not trivially zero: Adam moved the weights away from the initialisation
    ms.set_seed(1024)
    from pansharp_iqa.nlrnet.model import NLRNet

    fresh = NLRNet(bands=8, blocks=1).conv_input.weight.asnumpy()
    assert np.abs(sp["conv_input.weight"].asnumpy() - fresh).max() > 1e-4
