"""Sensor registry against the spec's GNyq table."""
from __future__ import annotations

import dataclasses
import json

import pytest

import reference_impl as R


@pytest.mark.parametrize("name", ["QB", "IKONOS", "GeoEye1", "WV2", "WV3", "WV4"])
def test_ms_and_pan_gnyq_table(piq, name):
    s = piq.get_sensor(name)
    n = len(R.SPEC_MS_GNYQ[name])
    assert tuple(s.gnyq_for(n)) == pytest.approx(tuple(R.SPEC_MS_GNYQ[name]), abs=0)
    assert s.pan_gnyq_for() == pytest.approx(R.SPEC_PAN_GNYQ[name], abs=0)
    assert s.ratio == 4
    assert len(s.band_names) == n




@pytest.mark.parametrize("name", ["QB", "WV2", "WV3"])
def test_bits_11(piq, name):
    assert piq.get_sensor(name).bits == 11


@pytest.mark.parametrize("n", [1, 3, 4, 8])
def test_none_generic(piq, n):
    s = piq.get_sensor("none")
    assert tuple(s.gnyq_for(n)) == pytest.approx((0.30,) * n, abs=0)
    assert s.pan_gnyq_for() == pytest.approx(0.15, abs=0)


def test_none_2015_per_band(piq):
    # spec: "The 2015 code's 'none' for WV2 data was 0.15 x8"
    s = piq.get_sensor("none")
    assert tuple(s.gnyq_for(8, protocol="toolbox2015")) == pytest.approx((0.15,) * 8, abs=0)


def test_pleiades_present(piq):
    s = piq.get_sensor("Pleiades")
    assert tuple(s.gnyq_for(4)) == pytest.approx((0.3,) * 4, abs=0)


def test_required_sensors_listed(piq):
    names = {n.lower() for n in piq.list_sensors()}
    for n in ["qb", "ikonos", "geoeye1", "wv2", "wv3", "wv4", "pleiades", "none", "prisma", "s2-10", "s2-20",
              "s2-60"]:
        assert n in names, (n, names)


@pytest.mark.parametrize("n", [60, 159, 239])
def test_prisma_any_band_count(piq, n):
    # hyperspectral_s2.md 1.2: HS 'PRISMA' 0.3 every band; PAN 0.2 (ASI pdf); ratio 6
    s = piq.get_sensor("prisma")
    assert tuple(s.gnyq_for(n)) == (0.3,) * n
    assert s.pan_gnyq_for() == 0.2 and s.ratio == 6 and s.bits == 16 and s.band_names is None
    assert "PRISMA-Mission-Status" in " ".join(s.sources)
    assert "0.22" in s.notes and "0.28" in s.notes and "no published source" in s.notes


@pytest.mark.parametrize(("name", "bands", "gnyq", "ratio"), [
    ("S2-10", ["B2", "B3", "B4", "B8"], [0.275, 0.28, 0.25, 0.24], None),
    ("S2-20", ["B5", "B6", "B7", "B8A", "B11", "B12"], [0.365, 0.33, 0.34, 0.32, 0.205, 0.235], 2),
    ("S2-60", ["B1", "B9"], [0.3175, 0.295], 6),
])
def test_sentinel2_tables(piq, name, bands, gnyq, ratio):
    s = piq.get_sensor(name)
    assert list(s.band_names) == bands and tuple(s.gnyq_for(len(bands))) == tuple(gnyq)
    assert s.ratio == ratio and s.bits == 16
    if name == "S2-10":
        assert s.pan_sensor is None
        with pytest.raises(ValueError, match="PAN"):
            s.pan_gnyq_for()
    else:  # the four 10 m bands play the PAN's role, each with its own GNyq
        assert s.pan_sensor == "S2-10" and s.to_dict()["pan_sensor"] == "S2-10"
        with pytest.raises(ValueError, match="S2-10"):
            s.pan_gnyq_for()
    with pytest.raises(ValueError, match="band"):
        s.gnyq_for(len(bands) + 1)


@pytest.mark.parametrize("alias,canonical", [("QuickBird", "QB"), ("quickbird", "QB"), ("qb", "QB"),
                                             ("WorldView-2", "WV2"), ("worldview-2", "WV2"),
                                             ("wv2", "WV2"), ("WORLDVIEW-3", "WV3"), ("ikonos", "IKONOS")])
def test_aliases_case_insensitive(piq, alias, canonical):
    s = piq.get_sensor(alias)
    assert s.name == canonical
    n = len(R.SPEC_MS_GNYQ[canonical])
    assert tuple(s.gnyq_for(n)) == pytest.approx(tuple(R.SPEC_MS_GNYQ[canonical]), abs=0)


def test_unknown_sensor_lists_known(piq):
    with pytest.raises(ValueError, match="(?i)sensor") as ei:
        piq.get_sensor("Landsat99")
    msg = str(ei.value)
    for n in ["QB", "IKONOS", "WV2", "WV3"]:
        assert n in msg, msg


def test_input_error_is_value_error(piq):
    assert issubclass(piq.InputError, ValueError)


def test_wv2_band_subset_by_names(piq):
    s = piq.get_sensor("WV2")
    sub = s.select_bands(["Blue", "Green", "Red", "NIR1"])
    assert tuple(sub.band_names) == ("Blue", "Green", "Red", "NIR1")
    assert tuple(sub.gnyq_for(4)) == pytest.approx((0.35, 0.35, 0.35, 0.35), abs=0)
    assert sub.pan_gnyq_for() == pytest.approx(0.11, abs=0)
    sub2 = s.select_bands(["Coastal", "NIR2"])
    assert tuple(sub2.gnyq_for(2)) == pytest.approx((0.35, 0.27), abs=0)


def test_wv3_4band_subset_picks_bgr_nir1(piq):
    # by name: Blue, Green, Red, NIR1 of the WV3 table (indexes 1, 2, 4, 6)
    t = R.SPEC_MS_GNYQ["WV3"]
    expected = (t[1], t[2], t[4], t[6])
    for s in (piq.get_sensor("WV3").select_bands("4band"), piq.get_sensor("WV3[4band]")):
        assert tuple(s.gnyq_for(4)) == pytest.approx(expected, abs=0)


def test_unknown_band_name_rejected(piq):
    with pytest.raises(ValueError, match="(?i)band"):
        piq.get_sensor("WV2").select_bands(["Blue", "Ultraviolet"])


def test_wrong_band_count_for_sensor(piq):
    with pytest.raises(ValueError, match="(?i)band"):
        piq.get_sensor("QB").gnyq_for(8)


def test_sensor_frozen_and_serialisable(piq):
    s = piq.get_sensor("WV3")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.name = "other"
    d = s.to_dict()
    json.dumps(d)
    assert d["name"] == "WV3"


def test_resolve_sensor_accepts_both(piq):
    s = piq.get_sensor("IKONOS")
    assert piq.resolve_sensor(s) is s or piq.resolve_sensor(s) == s
    assert piq.resolve_sensor("ikonos").name == "IKONOS"


def test_installed_package_finds_sensor_files(piq):
    """The registry is read from data files shipped with the package (works from any cwd)."""
    import os
    import subprocess
    import sys
    code = ("import pansharp_iqa as p; s = p.get_sensor('WorldView-3'); "
            "print(s.name, list(s.gnyq_for(8)), len(p.list_sensors()))")
    home = os.path.expanduser("~")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=home if os.path.isdir(home) else "/", timeout=120)
    assert out.returncode == 0, out.stderr
    name, rest = out.stdout.split(" ", 1)
    assert name == "WV3"
    assert "0.325" in rest and "0.315" in rest


def test_non_editable_wheel_ships_sensor_files(piq, tmp_path):
    """Build a wheel of the repository, install it into a private folder and use the registry
    from there (issue 2: sensors/ is installed with the package; test from a non-editable install)."""
    import os
    import subprocess
    import sys
    import zipfile

    repo = str(__import__("spec_helpers").REPO_ROOT)
    wheel_dir = tmp_path / "wheel"
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheel_dir), repo],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    wheels = list(wheel_dir.glob("pansharp_iqa-*.whl"))
    assert len(wheels) == 1
    names = zipfile.ZipFile(wheels[0]).namelist()
    tomls = [n for n in names if n.endswith(".toml")]
    for s in ["QB", "IKONOS", "GeoEye1", "WV2", "WV3", "WV4", "none", "PRISMA", "S2-10", "S2-20", "S2-60"]:
        assert any(n.endswith(f"/{s}.toml") for n in tomls), (s, tomls)
    site = tmp_path / "site"
    out = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
                          str(wheels[0])], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import pansharp_iqa as p; "
            "assert p.__file__.startswith(sys.argv[1]), p.__file__; "
            "s = p.get_sensor('worldview-2'); "
            "print(s.name, list(s.gnyq_for(8)), p.get_sensor('QuickBird').pan_gnyq_for())")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    out = subprocess.run([sys.executable, "-c", code, str(site)], capture_output=True, text=True,
                         cwd=str(tmp_path), env=env, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split()[0] == "WV2"
    assert "0.27" in out.stdout and out.stdout.strip().endswith("0.15")
