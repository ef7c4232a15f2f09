"""`magneton.record(...)`: records the PyTorch operators a block of code runs
into a run file (.mgt), the way torch.profiler is used (docs/recording.md).

    with magneton.record("run.mgt", fingerprints=True):   # recording pass: values
        model(x)
    with magneton.record("run-measured.mgt", energy="nvml"):  # measured pass
        model(x)

Every ATen operator call (forward and autograd backward) becomes an op with
its tensors in and out, so the file holds the dataflow graph; with
fingerprints=True each tensor value also gets a layout-invariant fingerprint
(slower: keep it off for the pass whose time and energy you measure)."""

from __future__ import annotations

import importlib
import os
import sys
import time
from typing import Optional

from magneton import config_snapshot
from magneton.compiled_calls import CompiledCalls

__all__ = ["record", "schedule", "fingerprint", "load_run", "extension", "distributed_identity", "rank_path"]

# What a rank's run says about its clock (RunInfo.extra["dist.clock"]): every
# process of one host reads the same CLOCK_MONOTONIC, so ranks of one host line
# up; clocks of different hosts are not aligned (docs/distributed.md).
CLOCK_NOTE = "CLOCK_MONOTONIC: comparable across ranks of one host; not aligned across hosts"

ENERGY_CHOICES = ("none", "nvml", "rapl", "auto")
# traced_steps="auto": kernels are traced for the measured pass's first steps,
# at least this many and this long (docs/recording.md, "Untraced steps").
TRACE_AUTO_STEPS = 20
TRACE_AUTO_SECONDS = 2.0
# A measured pass with energy on a GPU ends its traced stretch by holding the
# device idle this long, samplers and kernel trace on: counter intervals of
# known idle, so a steady loop's attribution can tell the idle level from the
# busy one (docs/energy.md, "Idle hold"). About three NVML counter updates.
IDLE_HOLD_SECONDS = 0.3


def extension():
    """The C++ extension magneton._torch. It links libtorch, so torch is
    imported first, as for any torch extension: that loads libc10 and libtorch
    into the process, and the extension's own load finds them there. An
    ImportError names the real cause (torch missing, the module not built, or
    a module that does not load: another torch's ABI, a missing library)."""
    try:
        import torch
    except ImportError as e:
        raise ImportError(f"magneton._torch needs torch, which cannot be imported here ({e})") from e
    try:
        from magneton import _torch
    except ModuleNotFoundError as e:
        if e.name != "magneton._torch":
            raise
        raise ImportError(
            "magneton._torch is not built: build it with scripts/build.sh (or cmake -S . -B build "
            "-DPython_EXECUTABLE=$(which python) && ninja -C build magneton_torch), or install Magneton "
            "with pip install .") from e
    except ImportError as e:
        raise ImportError(f"magneton._torch does not load with torch {torch.__version__} ({e}); rebuild it "
                          "against this torch") from e
    return _torch


def _devices(torch) -> list:
    """The CUDA devices this process sees, named as NVML names them."""
    out = []
    if not torch.cuda.is_available():
        return out
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        uuid = str(getattr(p, "uuid", "") or "")
        if uuid and not uuid.startswith("GPU-"):
            uuid = "GPU-" + uuid
        out.append({"kind": "gpu", "ordinal": i, "name": p.name, "uuid": uuid,
                    "memory_bytes": int(p.total_memory)})
    return out


def _int_env(name: str) -> Optional[int]:
    try:
        return int(os.environ[name])
    except (KeyError, ValueError):
        return None


def distributed_identity() -> Optional[dict]:
    """This process's place in a torch.distributed job, or None outside one.

    From the initialized default process group when there is one, else from the
    launcher's environment (RANK, WORLD_SIZE, LOCAL_RANK: torchrun, mp.spawn
    scripts that set them). Keys: rank, world_size, local_rank, backend, job
    (an identifier every rank of one job shares: MAGNETON_JOB_ID, else
    torchrun's TORCHELASTIC_RUN_ID, else MASTER_ADDR:MASTER_PORT, else "")."""
    rank, world, backend = _int_env("RANK"), _int_env("WORLD_SIZE"), ""
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            rank, world = dist.get_rank(), dist.get_world_size()
            backend = str(dist.get_backend())
    except Exception:  # noqa: BLE001 - a half-torn-down process group is not ours to judge
        pass
    if rank is None or world is None or world < 1 or not 0 <= rank < world:
        return None
    local = _int_env("LOCAL_RANK")
    job = os.environ.get("MAGNETON_JOB_ID", "")
    if not job:
        run_id = os.environ.get("TORCHELASTIC_RUN_ID", "")
        if run_id and run_id != "none":
            job = run_id
    if not job and os.environ.get("MASTER_ADDR") and os.environ.get("MASTER_PORT"):
        job = f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
    return {"rank": rank, "world_size": world, "local_rank": rank if local is None else local,
            "backend": backend, "job": job}


def rank_path(path: str, rank: int, world_size: int) -> str:
    """The run file of one rank: a `{rank}` placeholder in `path` is replaced by
    the rank; otherwise, when the job has more than one rank, `.rank<N>` goes
    before the extension (run.mgt -> run.rank0.mgt). One process: `path` as is."""
    path = str(path)
    if "{rank}" in path:
        return path.replace("{rank}", str(rank))
    if world_size <= 1:
        return path
    head, tail = os.path.split(path)
    stem, dot, ext = tail.rpartition(".")
    name = f"{stem}.rank{rank}.{ext}" if dot and stem else f"{tail}.rank{rank}"
    return os.path.join(head, name)


def _rank_device(torch, identity: dict) -> Optional[int]:
    """The CUDA ordinal this rank computes on (its own GPU among those it sees)."""
    try:
        if not torch.cuda.is_available():
            return None
        if torch.cuda.is_initialized():
            return int(torch.cuda.current_device())
        n = torch.cuda.device_count()
        return identity["local_rank"] if 0 <= identity["local_rank"] < n else 0
    except Exception:  # noqa: BLE001
        return None


class record:  # noqa: N801 - used like a function, as torch.profiler.profile
    """Context manager that records the torch ops run inside it into `path`.

    path: the run file to create; an existing file is an error unless overwrite=True.
        In a torch.distributed job every rank writes its own file: `{rank}` in the
        path becomes the rank, else `.rank<N>` goes before the extension when the
        world size is above 1 (run.mgt -> run.rank0.mgt); `.path` is the file
        written. Rank, world size and job go into the run's metadata.
    energy: "none", "nvml" (GPU power and energy), "rapl" (CPU packages) or
        "auto" (every sensor the machine offers).
    fingerprints: fingerprint every tensor value (the recording pass).
    ops: record every ATen operator (RecordFunction callbacks). None (default):
        yes in a recording pass (fingerprints) and on a machine without a GPU,
        where operators run synchronously and their host times are the
        measurement; no in a measured pass on a GPU, which then records the
        program as it runs: kernels, copies, synchronizations and CUDA API
        calls from CUPTI plus the energy samplers, and nothing per operator
        (`magneton diff` attributes its kernels to the recording pass's
        operators). True: the operator-level measured pass (to debug the recorder).
    schedule: which steps are recorded, for a program that calls `rec.step()`
        once per iteration: a torch.profiler-style schedule
        (magneton.schedule(wait=100, warmup=1, active=10, repeat=1)); wait and
        warm-up steps record nothing (the samplers keep going).
    fingerprint_steps: with fingerprints, the first N recorded steps are the
        recording pass (values) and the rest the measured pass, in one file:
        `magneton diff` splits it into its two passes (docs/recording.md, "Steps").
    traced_steps: in a measured pass on a GPU whose loop calls `rec.step()`,
        trace kernels for its first steps only, then detach CUPTI: the later
        steps run as the program does (CUPTI's per-kernel cost gone), with
        their step marks and energy readings, and `magneton diff` reports
        their time and energy per iteration beside the traced ones
        (docs/recording.md, "Untraced steps"). "auto" (default): the first
        TRACE_AUTO_STEPS steps and TRACE_AUTO_SECONDS seconds, whichever ends
        later; N: the first N steps; None: every step.
    idle_hold: seconds the device is held idle, with energy on a GPU, where
        the measured pass's traced stretch ends (after its last traced step,
        outside every step and the run's window): the activity model's idle
        level (docs/energy.md, "Idle hold"). 0 turns it off.
    stacks: Python call site (file:line:function) of each top-level op.
    kernels: link CUDA kernels to ops through CUPTI when this build has it.
    fingerprint_options: quantiles, spectrum_values, spectra_max_numel, spectra_max_side.
    replay: after the block, replay operators for their energy (docs/energy.md,
        "Replay"; magneton/op_replay.py) and add the measurements to the run file:
        True or "all" (every distinct operator key), a list of operator names or
        signatures, or a dict {"ops": ..., **options} with options from
        magneton.op_replay.DEFAULTS (budget_s, target_rse, window_s, ...). The block
        is then a capture pass (inputs are cloned): do not time it.
    After the block, `.summary` holds counts (ops, tensors, graph_inputs, ...)
    and, with replay, `.replay_result` the replay's results and stats.
    """

    def __init__(self, path: str, energy: str = "none", fingerprints: bool = False, stacks: bool = True,
                 kernels: bool = True, overwrite: bool = False, command: Optional[str] = None,
                 fingerprint_options: Optional[dict] = None, replay=None, ops: Optional[bool] = None,
                 schedule=None, fingerprint_steps: Optional[int] = None, traced_steps="auto",
                 idle_hold: float = IDLE_HOLD_SECONDS):
        if energy not in ENERGY_CHOICES:
            raise ValueError(f"energy={energy!r}: expected one of {', '.join(ENERGY_CHOICES)}")
        self.identity = distributed_identity()
        self.path = str(path)
        if self.identity is not None:
            self.path = rank_path(self.path, self.identity["rank"], self.identity["world_size"])
        elif "{rank}" in self.path:
            self.path = rank_path(self.path, 0, 1)
        self.energy = energy
        self.fingerprints = bool(fingerprints)
        if fingerprint_steps is not None and (not self.fingerprints or int(fingerprint_steps) < 0):
            raise ValueError("fingerprint_steps: needs fingerprints=True and a count of 0 or more steps")
        self.fingerprint_steps = None if fingerprint_steps is None else int(fingerprint_steps)
        if traced_steps not in (None, "auto") and (isinstance(traced_steps, bool) or not isinstance(traced_steps, int)
                                                   or traced_steps < 1):
            raise ValueError(f"traced_steps={traced_steps!r}: expected 'auto', None or a count of 1 or more steps")
        self.traced_steps = traced_steps
        if isinstance(idle_hold, bool) or not isinstance(idle_hold, (int, float)) or not 0 <= idle_hold <= 10:
            raise ValueError(f"idle_hold={idle_hold!r}: expected seconds from 0 to 10")
        self.idle_hold = float(idle_hold)
        self._tracing = traced_steps is not None  # kernel tracing may still stop
        self._measured_done = 0      # traced measured steps ended so far
        self._measured_t0 = None     # when the first of them ended (time.monotonic)
        # (step, time.perf_counter()) when kernel tracing stopped; None while it runs.
        self.untraced_from = None
        if schedule is not None and not callable(schedule):
            raise TypeError("schedule: expected a callable step -> torch.profiler.ProfilerAction "
                            "(magneton.schedule(wait=..., warmup=..., active=..., repeat=...))")
        self.schedule = schedule
        self._step = 0          # steps ended so far (step() calls)
        self._active_done = 0   # ...of which recorded
        self._measured_steps = 0  # ...of which in the measured pass
        self._phase = "paused"
        self.ops = ops if ops is None else bool(ops)
        self.stacks = bool(stacks)
        self.kernels = bool(kernels)
        self.overwrite = bool(overwrite)
        self.command = command if command is not None else " ".join(sys.argv)
        self.fingerprint_options = dict(fingerprint_options or {})
        self.summary: Optional[dict] = None
        self.config: dict = {}
        self._native = None
        self.replay_result: Optional[dict] = None
        self._replay_options: Optional[dict] = None
        self._replay_ops = None
        self._replay_capture = None
        self.replay_capture = None
        self._compiled_calls = None  # torch.compile graphs as operators, in the recording pass
        if replay is not None and replay is not False:
            options = dict(replay) if isinstance(replay, dict) else {}
            self._replay_ops = options.pop("ops", "all") if isinstance(replay, dict) else \
                ("all" if replay is True else replay)
            _replay = importlib.import_module("magneton.op_replay")

            unknown = set(options) - set(_replay.DEFAULTS)
            if unknown:
                raise TypeError(f"replay: unknown options {sorted(unknown)}")
            self._replay_options = options

    def __enter__(self):
        import torch

        ext = extension()
        self.config = config_snapshot.snapshot()
        devices = _devices(torch)
        # Operators in the measured phase: where there is no kernel tracing
        # (their host times are the measurement), on request, or for replays.
        ops = self.ops
        if ops is None:
            ops = self._replay_options is not None or not (self.kernels and devices)
        ops = ops or self._replay_options is not None
        self._measured_ops = ops
        self._native = ext.Recorder(
            self.path, overwrite=self.overwrite, fingerprints=self.fingerprints, ops=ops,
            phase=self._phase_of(0), stacks=self.stacks, kernels=self.kernels, energy=self.energy,
            command=self.command, devices=devices, **self.fingerprint_options)
        self._phase = self._phase_of(0)
        self._compiled_calls = CompiledCalls(ext)
        self._compiled_calls.set_active(self._records_ops(self._phase))
        for key, value in self.config.items():
            self._native.set_config(key, value)
        self._native.set_info("framework", "torch")
        self._native.set_info("torch_version", torch.__version__)
        self._native.set_info("fingerprints", "true" if self.fingerprints else "false")
        self._native.set_info("pass", "recording" if self.fingerprints else "measured")
        self._native.set_info("ops", "true" if ops else "false")
        if self.identity is not None:
            self._set_distributed_info(torch)
        if self._replay_options is not None:
            _replay = importlib.import_module("magneton.op_replay")

            self._native.set_info("replay", "true")
            self._replay_capture = ext.ReplayCapture(**_replay._selection(self._replay_ops, None))
        return self

    def step(self) -> None:
        """Marks the end of one step of the program (call it once per
        iteration, as with torch.profiler's `prof.step()`); with a `schedule`
        the recording pauses and resumes at step boundaries."""
        if self._native is None:
            raise RuntimeError("magneton.record: step() outside the recording block")
        if self._phase == "measured":
            self._measured_steps += 1
        if self._active_now():
            self._active_done += 1
            self._native.mark_step()
        if self._phase == "measured" and self._tracing and not self._measured_ops and self._tracing_ends():
            self._tracing = False
            self._synchronize()  # the last traced kernels' records are complete
            self._native.stop_kernel_tracing(idle_hold_s=self._idle_hold_now())
            self.untraced_from = (self._step + 1, time.perf_counter())
        self._step += 1
        phase = self._phase_of(self._step)
        if phase == self._phase:
            return
        if self._phase == "recording":
            self._synchronize()  # the recording pass's kernels end before the measured pass begins
        self._native.set_phase(phase)
        self._phase = phase
        self._compiled_calls.set_active(self._records_ops(phase))

    def _tracing_ends(self) -> bool:
        """Counts a traced measured step; whether kernel tracing stops after it (traced_steps)."""
        self._measured_done += 1
        now = time.monotonic()
        if self._measured_t0 is None:
            self._measured_t0 = now
        if self.traced_steps == "auto":  # enough traced steps for the regions' energy (10+ sensor readings)
            return self._measured_done >= TRACE_AUTO_STEPS and now - self._measured_t0 >= TRACE_AUTO_SECONDS
        return self._measured_done == self.traced_steps

    def _idle_hold_now(self) -> float:
        """Seconds to hold the device idle where the traced stretch ends: a
        measured pass with energy whose kernels ran on a GPU (the caller
        synchronized it)."""
        torch = sys.modules.get("torch")
        on_gpu = torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized()
        measured = self._phase == "measured" or self._measured_steps > 0  # a schedule may have paused it since
        return self.idle_hold if self.energy != "none" and self.kernels and measured and on_gpu else 0.0

    def _records_ops(self, phase: str) -> bool:
        return phase == "recording" or (phase == "measured" and self._measured_ops)

    def _active_now(self) -> bool:
        return self._phase != "paused"

    def _phase_of(self, step: int) -> str:
        """paused, recording or measured for step `step` (0 first)."""
        if self.schedule is not None:
            from torch.profiler import ProfilerAction

            if self.schedule(step) in (ProfilerAction.NONE, ProfilerAction.WARMUP):
                return "paused"
        if not self.fingerprints:
            return "measured"
        if self.fingerprint_steps is None or self._active_done < self.fingerprint_steps:
            return "recording"
        return "measured"

    def set_info(self, key: str, value: str) -> None:
        """Sets RunInfo.extra[key] in the run file (inside the block)."""
        if self._native is None:
            raise RuntimeError("set_info: only inside the record block")
        self._native.set_info(key, str(value))

    def rows_held(self) -> int:
        """Operator rows in memory, not yet written to the run file (0 outside the block)."""
        return self._native.rows_held() if self._native is not None else 0

    def _set_distributed_info(self, torch) -> None:
        ident = self.identity
        info = {"rank": ident["rank"], "world_size": ident["world_size"], "local_rank": ident["local_rank"],
                "dist.job": ident["job"], "dist.backend": ident["backend"], "dist.clock": CLOCK_NOTE}
        device = _rank_device(torch, ident)
        if device is not None:
            info["dist.cuda_device"] = device
        for key, value in info.items():
            self._native.set_info(key, str(value))

    def __exit__(self, exc_type, exc, tb):
        if self._native is None:
            return False
        if self.kernels:
            self._synchronize()
        if self.identity is not None and not self.identity["backend"]:
            self._late_backend()  # the process group was initialized inside the block
        capture, self._replay_capture = self._replay_capture, None
        if capture is not None:
            capture.stop()
        self._compiled_calls.stop()
        hold = self._idle_hold_now() if self.untraced_from is None else 0.0  # else held where tracing stopped
        # The configuration as the program ran: a whole script recorded from its first line
        # sets its flags after the recording began (allow_tf32 = ... at its top).
        for key, value in config_snapshot.snapshot().items():
            if self.config.get(key) != value:
                self.config[key] = value
                self._native.set_config(key, value)
        native, self._native = self._native, None
        self.summary = native.stop(idle_hold_s=hold)
        if capture is not None and exc_type is None:
            _replay = importlib.import_module("magneton.op_replay")

            self.replay_result = _replay._run_and_store(self.path, capture, self._replay_options)
            self.replay_capture = capture  # the captured inputs; `del rec.replay_capture` frees them
        return False  # the block's exception, if any, goes on

    def _late_backend(self) -> None:
        dist = sys.modules.get("torch.distributed")
        try:
            if dist is not None and dist.is_available() and dist.is_initialized():
                self.identity["backend"] = str(dist.get_backend())
                self._native.set_info("dist.backend", self.identity["backend"])
        except Exception:  # noqa: BLE001 - metadata only; the recording matters more
            pass

    @staticmethod
    def _synchronize():
        """Waits for queued GPU work so its kernels fall inside the recording."""
        torch = sys.modules.get("torch")
        try:
            if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
                torch.cuda.synchronize()
        except Exception:  # noqa: BLE001 - a broken CUDA context is the workload's business
            pass


def schedule(*, wait: int = 0, warmup: int = 0, active: int = 1, repeat: int = 0, skip_first: int = 0):
    """Which steps a recording keeps, as torch.profiler.schedule: skip_first
    steps, then cycles of `wait` idle steps, `warmup` steps and `active`
    recorded steps, `repeat` times (0: for as long as the program runs)."""
    from torch.profiler import schedule as torch_schedule

    return torch_schedule(wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=skip_first)


def fingerprint(tensor, **options) -> dict:
    """The layout-invariant fingerprint of a tensor (docs/fingerprints.md)."""
    return dict(extension().fingerprint(tensor, **options))


def load_run(path: str) -> dict:
    """A run file as plain dicts and lists (ops, tensors, kernels, config, ...)."""
    return dict(extension().load_run(str(path)))
