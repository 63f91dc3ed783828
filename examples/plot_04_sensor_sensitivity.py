"""
How much the sensor's MTF moves the numbers
===========================================

Khan's D_lambda_K and HQNR filter the fused image with the sensor's MTF, so a wrong sensor choice
changes them. :func:`pansharp_iqa.sensor_sensitivity` evaluates one fused image under several
sensors; a sensor that does not fit the image (here WV2, with 8 bands, against a 4-band image)
gets a reason instead of numbers.
"""

import matplotlib.pyplot as plt

import pansharp_iqa as pi
from pansharp_iqa.baselines import bt_h
from pansharp_iqa.demo_data import load_demo

ms, pan = load_demo()
fused = bt_h(ms, pan, sensor="none", ratio=4)

sensors = ["QB", "IKONOS", "GeoEye1", "WV2", "none"]
table = pi.sensor_sensitivity(fused, ms, pan, sensors=sensors, ratio=4, bits=11)
for name, r in table.items():
    print(f"{name:<8}", f"HQNR {r['HQNR']:.4f}" if "HQNR" in r else r["reason"][:90] + " ...")

# %%
# The sensors that fit, and their MS MTF gains at Nyquist:

fits = [n for n in sensors if "HQNR" in table[n]]
fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(fits, [table[n]["D_lambda_K"] for n in fits], "o-", label="D_lambda_K")
ax.plot(fits, [table[n]["HQNR"] for n in fits], "s-", label="HQNR")
ax.set_ylabel("value")
ax.legend()
ax.set_title("BT-H on the demo scene under each sensor's MTF")
fig.tight_layout()
plt.show()

for n in fits:
    s = pi.get_sensor(n)
    print(n, s.ms_gnyq or f"{s.ms_gnyq_all_bands} per band", "PAN", s.pan_gnyq)
