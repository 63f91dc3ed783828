"""
Full resolution: QNR and HQNR without a reference
=================================================

At the PAN's own scale there is no reference image. :func:`pansharp_iqa.evaluate_full` measures
the spectral distortion against the MS (D_lambda, and Khan's MTF-based D_lambda_K) and the spatial
distortion against the PAN (D_s), and combines them into QNR and HQNR.
"""

import matplotlib.pyplot as plt
import numpy as np

import pansharp_iqa as pi
from pansharp_iqa.baselines import BASELINES
from pansharp_iqa.demo_data import load_demo

ms, pan = load_demo()

results = {
    name: pi.evaluate_full(fuse(ms, pan, sensor="none", ratio=4), ms, pan, sensor="none", ratio=4, bits=11)
    for name, fuse in BASELINES.items()
}
indexes = pi.get_protocol("toolbox2020").full_indexes
print(f"{'method':<12}" + "".join(f"{k:>11}" for k in indexes))
for name, r in results.items():
    print(f"{name:<12}" + "".join(f"{r[k]:11.4f}" for k in indexes))

# %%
# QNR and HQNR side by side (higher is better; 1 is a perfect score).

names = list(results)
x = np.arange(len(names))
fig, ax = plt.subplots(figsize=(6, 3))
ax.bar(x - 0.2, [results[n]["QNR"] for n in names], width=0.4, label="QNR")
ax.bar(x + 0.2, [results[n]["HQNR"] for n in names], width=0.4, label="HQNR")
ax.set_xticks(x, names)
ax.set_ylim(0, 1)
ax.legend()
ax.set_title("Baselines on the demo scene (full resolution)")
fig.tight_layout()
plt.show()
