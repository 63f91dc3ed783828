"""PyTorch weights of the released NLRNet code, read and converted without torch.

The fixture ``data/nlrnet_tiny_torch.pt`` (4 bands, 2 blocks, 16 features, every gate non-zero)
and its outputs ``data/nlrnet_tiny_expected.npz`` were made once with PyTorch by
``data/make_torch_fixture.py``, a PyTorch re-expression of the released network; torch is not
needed here.

Limitation: this is not an independent check against the authors' code. The re-expression
follows the released ``net/nlrnet/NLRNet.py`` source for the top level and the residual blocks,
but the released context block (``GCblock.ContextBlock2d``) exists only as compiled ``.pyc``
files (``net/nlrnet/__pycache__/GCblock.cpython-36/37.pyc``, no source); the fixture's context
block was written from its parameter names and shapes and the paper, and was not run against
the released ``.pyc``. These tests therefore show that reading, name mapping and the MindSpore
network reproduce that re-expression (every tensor, every path), not that they reproduce the
released ``ContextBlock2d`` bit for bit.
"""

import pickle
import zipfile
from pathlib import Path

import pytest

ms = pytest.importorskip("mindspore")

import numpy as np  # noqa: E402

from pansharp_iqa.nlrnet.convert import convert_state_dict, convert_torch, infer_architecture, torch_to_mindspore_names  # noqa: E402
from pansharp_iqa.nlrnet.torch_pickle import TorchFormatError, read_torch_state_dict  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
FIXTURE = DATA / "nlrnet_tiny_torch.pt"
EXPECTED = DATA / "nlrnet_tiny_expected.npz"


def _run(net, e):
    return net(ms.Tensor(e["lms"]), ms.Tensor(e["pan"])).asnumpy()


def test_reader_gives_the_state_dict():
    sd = read_torch_state_dict(FIXTURE)
    assert len(sd) == 41  # 7 top-level tensors + 17 per block x 2 blocks
    assert sd["conv_input.weight"].shape == (16, 5, 7, 7) and sd["conv_input.weight"].dtype == np.float32
    assert sd["residual.1.gc.conv.weight"].shape == (1, 1, 9)
    assert sd["residual.0.gc.channel_add_conv.1.weight"].shape == (2, 1, 1)
    assert sd["residual.0.gamma"].shape == (1,) and sd["residual.0.gamma"][0] != 0.0


def test_converted_network_reproduces_pytorch_outputs(tmp_path):
    e = np.load(EXPECTED)
    net = convert_torch(FIXTURE, tmp_path / "tiny.ckpt", train_patch=32, sensor="QB")
    assert net.config() == {"bands": 4, "blocks": 2, "variant": "released", "released_unused": True,
                            "features": 16}
    fused = _run(net, e)
    assert np.abs(e["fused"]).max() > 0.5  # a non-trivial output
    np.testing.assert_allclose(fused, e["fused"], atol=1e-4, rtol=0)

    from pansharp_iqa.nlrnet import load_network  # the public entry point

    loaded = load_network(tmp_path / "tiny.ckpt")
    assert loaded.meta["train_patch"] == 32 and loaded.meta["sensor"] == "QB"
    assert "PyTorch" in loaded.meta["source"]
    np.testing.assert_array_equal(_run(loaded, e), fused)


def test_parameters_matched_by_name_not_order():
    e = np.load(EXPECTED)
    sd = read_torch_state_dict(FIXTURE)
    reversed_sd = dict(reversed(list(sd.items())))
    prefixed = {f"module.{k}": v for k, v in sd.items()}  # nn.DataParallel's prefix
    ref = _run(convert_state_dict(sd), e)
    np.testing.assert_array_equal(_run(convert_state_dict(reversed_sd), e), ref)
    np.testing.assert_array_equal(_run(convert_state_dict(prefixed), e), ref)
    names = torch_to_mindspore_names(list(sd))
    assert names["residual.1.in2.bias"] == "residual.1.in2.beta"
    assert names["residual.0.gc.gamma"] == "residual.0.enla.beta"
    assert names["bn_mid.weight"] == "norm_mid.gamma"
    assert names["conv_output.2.weight"] == "conv_out2.weight"
    assert len(set(names.values())) == len(names)


def test_architecture_read_from_names_and_shapes():
    sd = read_torch_state_dict(FIXTURE)
    assert infer_architecture(sd) == {"bands": 4, "blocks": 2, "features": 16,
                                      "variant": "released", "released_unused": True}
    lean = {k: v for k, v in sd.items() if "channel_add_conv" not in k and k != "outconv.weight"}
    net = convert_state_dict(lean)
    assert net.config()["released_unused"] is False
    e = np.load(EXPECTED)
    np.testing.assert_allclose(_run(net, e), e["fused"], atol=1e-4)  # unused modules change nothing


@pytest.mark.parametrize("damage,match", [
    (lambda sd: sd.pop("residual.1.gc.conv.weight"), "not in the file"),
    (lambda sd: sd.update({"residual.0.extra.weight": np.zeros(3, np.float32)}), "not one of"),
    (lambda sd: sd.update({"conv_mid.weight": np.zeros((16, 16, 1, 1), np.float32)}), "shape"),
])
def test_incomplete_or_foreign_state_dict_is_refused(damage, match):
    sd = read_torch_state_dict(FIXTURE)
    damage(sd)
    with pytest.raises(ValueError, match=match):
        convert_state_dict(sd, where="x.pt")


class _Evil:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


def _archive(path: Path, payload: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/byteorder", "little")
    return path


def test_restricted_unpickler_refuses_code(tmp_path):
    marker = tmp_path / "pwned"
    evil = _archive(tmp_path / "evil.pt", pickle.dumps({"w": _Evil(marker)}, protocol=2))
    with pytest.raises(TorchFormatError, match=r"refused to load (posix|os)\.system"):
        read_torch_state_dict(evil)
    assert not marker.exists()
    not_a_dict = _archive(tmp_path / "list.pt", pickle.dumps([1, 2], protocol=2))
    with pytest.raises(TorchFormatError, match="not a state_dict"):
        read_torch_state_dict(not_a_dict)


def test_legacy_and_foreign_files_are_refused(tmp_path):
    legacy = tmp_path / "old.pt"
    legacy.write_bytes(pickle.dumps({"a": 1}, protocol=2))
    with pytest.raises(TorchFormatError, match="not a torch.save zip archive"):
        read_torch_state_dict(legacy)
    with pytest.raises(FileNotFoundError):
        read_torch_state_dict(tmp_path / "missing.pt")
    from pansharp_iqa.nlrnet.checkpoint import load_network

    with pytest.raises(ValueError, match="convert it first"):
        load_network(FIXTURE)  # a PyTorch file handed to the MindSpore loader


def test_cli_convert_then_infer_and_export(tmp_path, capsys):
    import h5py

    from nlrnet_helpers import synthetic_arrays, write_h5
    from pansharp_iqa.nlrnet.cli import main

    ckpt = tmp_path / "tiny.ckpt"
    assert main(["convert", "--from-torch", str(FIXTURE), "--out", str(ckpt), "--train-patch", "32",
                 "--sensor", "QB"]) == 0
    assert "4 bands, 2 blocks, 16 features" in capsys.readouterr().out
    assert main(["convert", "--from-torch", str(FIXTURE), "--out", str(ckpt)]) == 2  # exists
    assert "--force" in capsys.readouterr().err
    gt, lms, pan = synthetic_arrays(1, 80, bands=4)
    h5 = write_h5(tmp_path / "qb.h5", gt, lms, pan, sensor="QB")
    assert main(["infer", "--ckpt", str(ckpt), "--data", str(h5), "--out", str(tmp_path / "R"),
                 "--whole-scene"]) == 0
    with h5py.File(tmp_path / "R" / "qb.h5") as f:
        sr = f["sr"][:]
    from pansharp_iqa.nlrnet import load_network

    ref = load_network(ckpt)(ms.Tensor(lms), ms.Tensor(pan)).asnumpy() * 2047.0
    np.testing.assert_allclose(sr, ref, rtol=1e-5, atol=1e-3)
    assert main(["export", "--ckpt", str(ckpt), "--out", str(tmp_path / "tiny.mindir")]) == 0
    import json

    sidecar = json.loads((tmp_path / "tiny.mindir.json").read_text())
    assert sidecar["tile"] == 32 and sidecar["features"] == 16  # default tile = training patch
    ms.set_context(mode=ms.PYNATIVE_MODE)
