"""What a JAX recording says about where it ran: run info, the configuration
snapshot that can change numerics or kernels, and the accelerators."""

from __future__ import annotations

import os
import sys

import jax

# jax.config options that steer numerics, kernel choice or compilation.
CONFIG_OPTIONS = (
    "jax_default_matmul_precision", "jax_enable_x64", "jax_numpy_dtype_promotion",
    "jax_numpy_rank_promotion", "jax_default_prng_impl", "jax_threefry_partitionable",
    "jax_softmax_custom_jvp", "jax_disable_jit", "jax_platforms", "jax_platform_name",
    "jax_default_device", "jax_optimization_level", "jax_memory_fitting_level",
    "jax_disable_most_optimizations", "jax_enable_pgle", "jax_allow_f16_reductions",
    "jax_use_hlo_logistic_lowering", "jax_use_shardy_partitioner", "jax_cpu_enable_async_dispatch",
    "jax_enable_compilation_cache", "jax_compilation_cache_dir", "jax_debug_nans", "jax_debug_infs",
    "jax_enable_checks", "jax_num_cpu_devices", "jax_explicit_x64_dtypes",
)
ENV_PREFIXES = ("XLA_", "JAX_", "NCCL_")
ENV_NAMES = ("NVIDIA_TF32_OVERRIDE", "CUDA_VISIBLE_DEVICES", "CUBLAS_WORKSPACE_CONFIG",
             "CUDA_DEVICE_MAX_CONNECTIONS", "OMP_NUM_THREADS")


def config_snapshot() -> dict:
    """{"jax.config.<option>": value, "env.<NAME>": value, "jax.backend": ...}."""
    snap = {}
    values = getattr(jax.config, "values", {})
    for name in CONFIG_OPTIONS:
        if name in values:
            snap[f"jax.config.{name}"] = str(values[name])
    for k, v in os.environ.items():
        if k.startswith(ENV_PREFIXES) or k in ENV_NAMES:
            snap[f"env.{k}"] = v
    snap["env.XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "")
    snap["jax.backend"] = jax.default_backend()
    try:
        from jax.extend import backend
        snap["jax.platform_version"] = str(backend.get_backend().platform_version)
    except Exception:
        pass
    snap["jax.devices"] = ", ".join(f"{d.platform}:{d.id}:{d.device_kind}" for d in jax.devices())
    return snap


def info_extra() -> dict:
    import jaxlib
    extra = {"framework": "jax", "jax_version": jax.__version__, "jaxlib_version": jaxlib.__version__,
             "backend": jax.default_backend(), "python_version": sys.version.split()[0]}
    try:
        import torch
        extra["torch_version"] = torch.__version__  # fingerprints run through ATen
    except ImportError:
        pass
    return extra


def command_line() -> str:
    return " ".join(sys.argv) if sys.argv and sys.argv[0] else sys.executable


class Devices:
    """Accelerators seen by the values of a recording. CPU values live on the
    host (device -1, as in torch); each accelerator gets a local index, which
    the writer maps to a run device id."""

    def __init__(self):
        self.local: dict = {}   # jax Device -> local index
        self.rows: list = []    # Device dicts, by local index

    def of(self, value) -> int:
        devs = getattr(value, "devices", None)
        if devs is None:
            return -1
        try:
            ds = devs()
        except Exception:
            return -1
        if len(ds) != 1:
            return -1
        d = next(iter(ds))
        if d.platform == "cpu":
            return -1
        idx = self.local.get(d)
        if idx is None:
            idx = self.local[d] = len(self.rows)
            memory = 0
            try:
                memory = int((d.memory_stats() or {}).get("bytes_limit", 0))
            except Exception:
                pass
            row = {"kind": "gpu" if d.platform in ("gpu", "cuda", "rocm") else d.platform,
                   "ordinal": int(getattr(d, "local_hardware_id", d.id) or 0),
                   "name": str(d.device_kind), "uuid": "", "memory_bytes": memory}
            # The uuid joins this row to the energy sampler's and the tracer's.
            for known in _cuda_devices() if row["kind"] == "gpu" else []:
                if known["ordinal"] == row["ordinal"]:
                    row.update(uuid=known["uuid"], name=known["name"])
            self.rows.append(row)
        return idx


def _cuda_devices() -> list:
    """CUDA devices as the torch recorder names them (uuid, NVML name)."""
    try:
        import torch
        from magneton.recorder import _devices
        return _devices(torch)
    except Exception:
        return []
