"""The H200 energy checks of issue 3 (run by scripts/gpu/energy.sh), through
magneton._energy's samplers:
  idle     3 s with nothing running: idle power;
  steady   a bf16 8192^3 matmul loop, 1 s warm-up then a 10 s window: loaded
           power, the energy-counter delta against the integral of the sampled
           instant power (goal: within 3%), and each reading's update period;
  duty     3 s of 30 ms on / 70 ms off: does the counter integrate
           continuously (its mean power follows the duty cycle) or is it built
           from the same sparse samples as instant power?
Prints a table; writes every reading (changes only, trace clock) as JSON."""
import json
import statistics
import sys
import time

import torch

from magneton import _energy

out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
mon = _energy.Monitor(rapl=False, procfs=False, gpus=[0], poll_interval_us=2000, energy_poll_interval_us=15000)
if not mon.available:
    print("energy_check: no energy sensor:", mon.reason)
    sys.exit(1)
for p in mon.problems():
    print("note:", p["name"], p["description"])


def series():
    return {(s["label"], s["sensor"]): s for s in mon.series()}


def counter_delta(s, a, b):
    """Linear interpolation of the raw counter between its first-seen updates (first reading dropped)."""
    t, v = s["t_ns"][1:], s["value"][1:]

    def at(x):
        for i in range(1, len(t)):
            if t[i] >= x:
                return v[i - 1] + (v[i] - v[i - 1]) * (x - t[i - 1]) / (t[i] - t[i - 1])
        return v[-1] + (v[-1] - v[-2]) * (x - t[-1]) / (t[-1] - t[-2])
    return at(b) - at(a)


def step_integral(s, a, b):
    """Integral of a sample-and-hold series over [a, b], as sampled (no lag correction)."""
    t, v = s["t_ns"], s["value"]
    j = 0.0
    for i in range(len(t)):
        lo = max(t[i], a)
        hi = min(t[i + 1] if i + 1 < len(t) else b, b)
        if hi > lo:
            j += v[i] * (hi - lo) * 1e-9
    return j


def update_period_ms(s, a, b):
    ts = [x for x in s["t_ns"] if a <= x <= b]
    gaps = [(y - x) / 1e6 for x, y in zip(ts, ts[1:])]
    return (statistics.median(gaps), min(gaps), len(ts)) if gaps else (float("nan"), float("nan"), len(ts))


x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
y = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
time.sleep(1.0)

# idle
mon.begin_window("idle")
time.sleep(3.0)
idle = mon.end_window("idle", settle=True)


def matmuls_for(seconds):
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        for _ in range(20):
            x @ y
        torch.cuda.synchronize()
        n += 20
    return n


matmuls_for(1.0)  # warm-up: clocks and power reach steady state (SC24: discard the rise)
mon.begin_window("steady")
n = matmuls_for(10.0)
steady = mon.end_window("steady", settle=True)

# duty cycle: 30 ms of matmuls, 70 ms idle, for 3 s
mon.begin_window("duty")
end = time.monotonic() + 3.0
busy_s = 0.0
while time.monotonic() < end:
    t = time.monotonic()
    while time.monotonic() - t < 0.030:
        x @ y
        torch.cuda.synchronize()
    busy_s += time.monotonic() - t
    time.sleep(0.070)
duty = mon.end_window("duty", settle=True)
time.sleep(0.3)
s = series()
mon.stop()

gpu = "gpu0"
rows = []
def w(m):
    d = [e for e in m["devices"] if e["label"] == gpu][0]
    return d["joules"], d["joules"] / m["time_s"], d["method"]
idle_j, idle_w, _ = w(idle)
steady_j, steady_w, method = w(steady)
a, b = steady["start_ns"], steady["end_ns"]
cd = counter_delta(s[(gpu, "energy.total")], a, b)
pi = step_integral(s[(gpu, "power.instant")], a, b) if (gpu, "power.instant") in s else float("nan")
pu = step_integral(s[(gpu, "power.usage")], a, b) if (gpu, "power.usage") in s else float("nan")
da, db = duty["start_ns"], duty["end_ns"]
dsec = (db - da) * 1e-9
dc = counter_delta(s[(gpu, "energy.total")], da, db)
di = step_integral(s[(gpu, "power.instant")], da, db) if (gpu, "power.instant") in s else float("nan")

print(f"device: {torch.cuda.get_device_name(0)}")
# The comparison is only valid when the kept readings cover the whole window
# (before the Monitor's retention fix they covered only its last second).
ctr = s[(gpu, "energy.total")]
covered = ctr["t_ns"][1] <= a and ctr["t_ns"][-1] >= b
n_in = sum(1 for t in ctr["t_ns"] if a <= t <= b)
print(f"{'steady window covered by kept readings':<44} {'yes' if covered else 'NO (comparison invalid)':>9}   "
      f"({n_in} counter updates inside, first kept {(ctr['t_ns'][0] - a) / 1e9:+.3f} s from window start)")
print(f"{'idle power (3 s, counter)':<44} {idle_w:9.1f} W")
print(f"{'loaded power (bf16 matmul, 10 s, counter)':<44} {steady_w:9.1f} W   ({n} matmuls, {steady_j / n:.3f} J each)")
print(f"{'steady window':<44} {steady['time_s']:9.3f} s")
print(f"{'  energy-counter delta':<44} {cd:9.1f} J")
print(f"{'  integral of instant power (field 186)':<44} {pi:9.1f} J   diff {100 * (pi - cd) / cd:+.2f}% (goal within 3%)")
print(f"{'  integral of power usage':<44} {pu:9.1f} J   diff {100 * (pu - cd) / cd:+.2f}%")
print(f"{'  Monitor window (' + method + ')':<44} {steady_j:9.1f} J   diff {100 * (steady_j - cd) / cd:+.2f}%")
print(f"{'duty 30/70 ms, 3 s: counter mean power':<44} {dc / dsec:9.1f} W")
print(f"{'  instant-power mean':<44} {di / dsec:9.1f} W   (GPU busy {100 * busy_s / dsec:.0f}% of the time)")
print("observed update periods while loaded (median / min ms, readings):")
for key in sorted(s):
    if key[0] != gpu:
        continue
    med, mn, cnt = update_period_ms(s[key], a, b)
    print(f"  {key[1]:<16} {med:8.1f} / {mn:6.1f} ms   {cnt} changes")
with open(f"{out_dir}/energy_series.json", "w") as f:
    json.dump({"windows": {m["name"]: {"start_ns": m["start_ns"], "end_ns": m["end_ns"]} for m in (idle, steady, duty)},
               "series": [{k: v for k, v in x.items()} for x in s.values()]}, f)
