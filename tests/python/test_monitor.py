"""magneton.Monitor through the real magneton._energy module (built into
python/magneton by CMake): nested windows, and on a machine without energy
sensors (CI) windows that time the code and say why energy is unavailable."""

import os
import time

import pytest

import magneton
from magneton import monitor as monitor_mod

needs_module = pytest.mark.skipif(monitor_mod._energy is None, reason="magneton._energy is not built")


@needs_module
def test_clock_is_the_monotonic_clock():
    a = time.monotonic_ns()
    b = magneton.clock_ns()
    c = time.monotonic_ns()
    assert a <= b <= c


@needs_module
def test_nested_windows_and_their_times():
    with magneton.Monitor(nvml=False, rapl=False) as m:
        m.begin_window("outer")
        m.begin_window("inner")
        time.sleep(0.05)
        inner = m.end_window("inner")
        time.sleep(0.05)
        outer = m.end_window("outer")
    assert 0.05 <= inner.time_s < outer.time_s
    assert outer.start_ns < inner.start_ns < inner.end_ns < outer.end_ns
    with pytest.raises(ValueError):
        m.end_window("inner")  # stopped


@needs_module
def test_unknown_and_duplicate_windows_are_errors():
    with magneton.Monitor(nvml=False, rapl=False, procfs=False) as m:
        with pytest.raises(ValueError, match="no open window"):
            m.end_window("x")
        m.begin_window("x")
        with pytest.raises(ValueError, match="already open"):
            m.begin_window("x")


@needs_module
def test_without_sensors_energy_is_none_with_a_reason_and_cpu_is_an_estimate():
    with magneton.Monitor(nvml=False, rapl=False, procfs=True) as m:
        with m.window("busy") as w:
            end = time.monotonic() + 0.3
            while time.monotonic() < end:
                pass
    meas = w.measurement
    assert meas.energy_j is None and meas.total_j is None
    assert meas.reason
    assert "host-cpu" in meas.estimates_j  # CPU time x watts per core, kept apart
    assert meas.source["host-cpu"].startswith("estimate")


@needs_module
def test_a_meter_stream_is_measured(tmp_path):
    path = tmp_path / "meter.csv"
    path.write_text("")
    with magneton.Monitor(nvml=False, rapl=False, procfs=False, meter=str(path)) as m:
        with open(path, "a") as f:
            f.write(f"{time.monotonic_ns()},250\n")
            f.flush()
            m.begin_window("w")
            time.sleep(0.2)
            f.write(f"{time.monotonic_ns()},250\n")
            f.flush()
            time.sleep(0.1)  # the sampler reads every 50 ms
            meas = m.end_window("w")
        series = m.series()
    assert meas.energy_j is not None, meas.reason
    (label, joules), = meas.energy_j.items()
    assert label.startswith("meter")
    assert joules == pytest.approx(250 * meas.time_s, rel=0.05)
    assert any(s["sensor"] == "power" and s["source"] == "meter" for s in series)


def test_fallback_without_the_module(monkeypatch):
    monkeypatch.setattr(monitor_mod, "_energy", None)
    monkeypatch.setattr(monitor_mod, "_IMPORT_ERROR", "magneton._energy is not built (test)")
    m = monitor_mod.Monitor()
    assert not m.available and "not built" in m.reason
    m.begin_window("a")
    meas = m.end_window("a")
    assert meas.energy_j is None and "not built" in meas.reason and meas.time_s >= 0
