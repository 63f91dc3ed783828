"""Convert the authors' PyTorch NLRNet weights into a MindSpore network checkpoint.

The released code (Lei et al., IEEE TGRS 60, 2022, doi:10.1109/TGRS.2021.3067097; github
aaabbbcq/NLRNET) saves ``torch.save(model.state_dict(), 'net.model')``. Its parameters are
matched to :class:`~pansharp_iqa.nlrnet.model.NLRNet` **by name** (never by order: the two
networks declare their parameters in different orders, and 48 of the 143 pairs taken by order
differ in shape) with the rules of :data:`RENAME_RULES`; PyTorch's ``InstanceNorm2d`` /
``LayerNorm`` ``weight``/``bias`` become MindSpore's ``gamma``/``beta``, and the ENLA ``Conv1d``
kernel (1, 1, 9) becomes MindSpore's (1, 1, 1, 9). Band count, block count, width and whether
the released code's unused modules are present are read from the names and shapes. Every
PyTorch tensor must be used and every MindSpore parameter filled, with the expected shape.

The PyTorch file is read by :mod:`.torch_pickle` (no PyTorch needed).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from .torch_pickle import read_torch_state_dict

__all__ = ["RENAME_RULES", "torch_to_mindspore_names", "infer_architecture", "convert_state_dict",
           "convert_torch", "RELEASED_TRAIN_PATCH"]

#: patch size the released code trains on by default (``--block_size 128``), px at PAN scale
RELEASED_TRAIN_PATCH = 128

#: (PyTorch name pattern, MindSpore name template), tried in order; ``{i}`` is the block index
RENAME_RULES: tuple[tuple[str, str], ...] = (
    (r"conv_input\.weight", "conv_input.weight"),
    (r"residual\.(\d+)\.conv([12])\.weight", "residual.{0}.conv{1}.weight"),
    (r"residual\.(\d+)\.in([12])\.weight", "residual.{0}.in{1}.gamma"),
    (r"residual\.(\d+)\.in([12])\.bias", "residual.{0}.in{1}.beta"),
    (r"residual\.(\d+)\.gamma", "residual.{0}.gamma"),
    (r"residual\.(\d+)\.gc\.gamma", "residual.{0}.enla.beta"),
    (r"residual\.(\d+)\.gc\.conv_mask\.(weight|bias)", "residual.{0}.enla.conv_mask.{1}"),
    (r"residual\.(\d+)\.gc\.conv\.weight", "residual.{0}.enla.mixer.weight"),
    (r"residual\.(\d+)\.gc\.channel_add_conv\.([03])\.(weight|bias)",
     "residual.{0}.enla.unused_channel_add.{1}.{2}"),
    (r"residual\.(\d+)\.gc\.channel_add_conv\.1\.weight", "residual.{0}.enla.unused_channel_add.1.gamma"),
    (r"residual\.(\d+)\.gc\.channel_add_conv\.1\.bias", "residual.{0}.enla.unused_channel_add.1.beta"),
    (r"conv_mid\.weight", "conv_mid.weight"),
    (r"bn_mid\.weight", "norm_mid.gamma"),
    (r"bn_mid\.bias", "norm_mid.beta"),
    (r"conv_output\.0\.weight", "conv_out1.weight"),
    (r"conv_output\.2\.weight", "conv_out2.weight"),
    (r"outconv\.weight", "unused_outconv.weight"),
)


def torch_to_mindspore_names(names: list[str], *, where: str = "state_dict") -> dict[str, str]:
    """Map released-code PyTorch parameter names to :class:`NLRNet` parameter names."""
    out: dict[str, str] = {}
    for name in names:
        bare = name[len("module."):] if name.startswith("module.") else name
        for pattern, template in RENAME_RULES:
            m = re.fullmatch(pattern, bare)
            if m:
                out[name] = template.format(*m.groups())
                break
        else:
            raise ValueError(f"{where}: parameter {name!r} is not one of the released NLRNet's "
                             "(is this the authors' NLRNet state_dict?)")
    return out


def infer_architecture(state: dict[str, np.ndarray], *, where: str = "state_dict") -> dict[str, Any]:
    """NLRNet constructor arguments that fit a released-code PyTorch state_dict."""
    bare = {(k[len("module."):] if k.startswith("module.") else k): v for k, v in state.items()}
    for key in ("conv_input.weight", "conv_output.2.weight"):
        if key not in bare:
            raise ValueError(f"{where}: no {key!r}: not the released NLRNet state_dict")
    features, c_in = bare["conv_input.weight"].shape[:2]
    bands = bare["conv_output.2.weight"].shape[0]
    if c_in != bands + 1:
        raise ValueError(f"{where}: conv_input takes {c_in} channels but the output has {bands} bands "
                         f"(expected {bands} + 1)")
    blocks = 1 + max((int(m.group(1)) for k in bare if (m := re.match(r"residual\.(\d+)\.", k))),
                     default=-1)
    if blocks < 1:
        raise ValueError(f"{where}: no residual blocks")
    unused = "outconv.weight" in bare or any(".channel_add_conv." in k for k in bare)
    return {"bands": int(bands), "blocks": int(blocks), "features": int(features),
            "variant": "released", "released_unused": bool(unused)}


def convert_state_dict(state: dict[str, np.ndarray], *, where: str = "state_dict"):  # noqa: ANN201
    """Build an NLRNet holding the weights of a released-code PyTorch state_dict."""
    import mindspore as ms

    from .model import NLRNet

    arch = infer_architecture(state, where=where)
    names = torch_to_mindspore_names(list(state), where=where)
    net = NLRNet(**arch)
    expected = {p.name: tuple(p.shape) for p in net.get_parameters()}
    converted: dict[str, ms.Parameter] = {}
    for t_name, m_name in names.items():
        value = np.asarray(state[t_name], dtype=np.float32)
        if m_name.endswith("enla.mixer.weight") and value.ndim == 3:
            value = value[:, :, None, :]  # Conv1d (1, 1, 9) -> MindSpore Conv1d (1, 1, 1, 9)
        if m_name not in expected:
            raise ValueError(f"{where}: {t_name} -> {m_name} has no place in the inferred network {arch}")
        if value.shape != expected[m_name]:
            raise ValueError(f"{where}: {t_name} has shape {value.shape}; {m_name} needs {expected[m_name]}")
        if m_name in converted:
            raise ValueError(f"{where}: two PyTorch tensors map to {m_name}")
        converted[m_name] = ms.Parameter(ms.Tensor(value), name=m_name)
    missing = [k for k in expected if k not in converted]
    if missing:
        raise ValueError(f"{where}: {len(missing)} parameters of NLRNet{arch} are not in the file "
                         f"(first: {missing[0]})")
    ms.load_param_into_net(net, converted, strict_load=True)
    net.set_train(False)
    return net


def convert_torch(source: str | Path, out: str | Path, *, train_patch: int = RELEASED_TRAIN_PATCH,
                  sensor: str | None = None, ratio: int | None = None, bits: int | None = None,
                  force: bool = False):  # noqa: ANN201 - NLRNet
    """Convert a released-code PyTorch NLRNet state_dict file to a network checkpoint."""
    from .checkpoint import save_network

    out = Path(out)
    if train_patch < 8:
        raise ValueError(f"--train-patch must be a patch size in px (>= 8), got {train_patch}")
    if out.exists() and not force:
        raise FileExistsError(f"{out} exists: choose another --out or pass --force to overwrite it")
    if out.exists() and out.is_dir():
        raise ValueError(f"--out {out} is a folder; give the checkpoint file to write")
    net = convert_state_dict(read_torch_state_dict(source), where=str(source))
    meta = {"sensor": sensor, "ratio": ratio, "bits": bits, "train_patch": int(train_patch),
            "source": f"converted from PyTorch {Path(source).name}", "input_scale": "unit"}
    out.parent.mkdir(parents=True, exist_ok=True)
    save_network(net, out, meta)
    net.meta = {**meta, **net.config()}
    return net
