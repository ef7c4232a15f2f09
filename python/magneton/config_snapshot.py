"""The configuration snapshot stored in a run (Run.config): settings that
steer which kernels run and how precisely, read when a recording starts and when
it stops (the program as it ran: a script sets its flags after the start), so a diff can
name the flag that differs between two runs (docs/recording.md)."""

from __future__ import annotations

import os
import platform
import sys

ENV_EXACT = ("NVIDIA_TF32_OVERRIDE", "CUBLAS_WORKSPACE_CONFIG", "CUBLASLT_WORKSPACE_SIZE",
             "OMP_NUM_THREADS", "MKL_NUM_THREADS", "XLA_FLAGS", "PYTORCH_CUDA_ALLOC_CONF")
ENV_PREFIXES = ("TORCH_", "CUDA_", "PYTORCH_", "NCCL_", "CUDNN_", "CUBLAS_")


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _safe(out: dict, key: str, read) -> None:
    """Reads one setting; a setting this torch build lacks is left out."""
    try:
        out[key] = _text(read())
    except Exception:  # noqa: BLE001 - missing attribute, no CUDA, older torch
        pass


def torch_config(torch) -> dict:
    out: dict = {}
    b = torch.backends
    _safe(out, "torch.backends.cuda.matmul.allow_tf32", lambda: b.cuda.matmul.allow_tf32)
    _safe(out, "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
          lambda: b.cuda.matmul.allow_fp16_reduced_precision_reduction)
    _safe(out, "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
          lambda: b.cuda.matmul.allow_bf16_reduced_precision_reduction)
    _safe(out, "torch.backends.cudnn.allow_tf32", lambda: b.cudnn.allow_tf32)
    _safe(out, "torch.backends.cudnn.benchmark", lambda: b.cudnn.benchmark)
    _safe(out, "torch.backends.cudnn.deterministic", lambda: b.cudnn.deterministic)
    _safe(out, "torch.backends.cudnn.enabled", lambda: b.cudnn.enabled)
    _safe(out, "torch.float32_matmul_precision", torch.get_float32_matmul_precision)
    _safe(out, "torch.backends.cuda.sdp.flash", b.cuda.flash_sdp_enabled)
    _safe(out, "torch.backends.cuda.sdp.mem_efficient", b.cuda.mem_efficient_sdp_enabled)
    _safe(out, "torch.backends.cuda.sdp.math", b.cuda.math_sdp_enabled)
    _safe(out, "torch.backends.cuda.sdp.cudnn", b.cuda.cudnn_sdp_enabled)
    _safe(out, "torch.deterministic_algorithms", torch.are_deterministic_algorithms_enabled)
    _safe(out, "torch.default_dtype", lambda: str(torch.get_default_dtype()).replace("torch.", ""))
    _safe(out, "torch.num_threads", torch.get_num_threads)
    _safe(out, "torch.grad_enabled", torch.is_grad_enabled)
    _safe(out, "torch.inference_mode", torch.is_inference_mode_enabled)
    for device in ("cuda", "cpu"):
        _safe(out, f"torch.autocast.{device}.enabled", lambda d=device: torch.is_autocast_enabled(d))
        _safe(out, f"torch.autocast.{device}.dtype",
              lambda d=device: str(torch.get_autocast_dtype(d)).replace("torch.", ""))
    _safe(out, "version.torch", lambda: torch.__version__)
    _safe(out, "version.cuda", lambda: torch.version.cuda or "none")
    _safe(out, "version.cudnn", lambda: b.cudnn.version() if b.cudnn.is_available() else "none")
    _safe(out, "cuda.device_count", lambda: torch.cuda.device_count() if torch.cuda.is_available() else 0)
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            _safe(out, f"cuda.{i}.name", lambda i=i: torch.cuda.get_device_name(i))
            _safe(out, f"cuda.{i}.capability",
                  lambda i=i: "%d.%d" % torch.cuda.get_device_capability(i))
    return out


def environment_config(environ=None) -> dict:
    environ = os.environ if environ is None else environ
    return {f"env.{k}": v for k, v in sorted(environ.items())
            if k in ENV_EXACT or k.startswith(ENV_PREFIXES)}


def versions_config() -> dict:
    out = {"version.python": platform.python_version(), "platform": platform.platform()}
    for name in ("transformers", "jax", "numpy", "accelerate", "flash_attn"):
        module = sys.modules.get(name)  # only what the workload imported
        if module is not None and hasattr(module, "__version__"):
            out[f"version.{name}"] = str(module.__version__)
    return out


def snapshot() -> dict:
    """Everything above, as text keys and values."""
    out: dict = {}
    torch = sys.modules.get("torch")
    if torch is None:
        import torch  # noqa: PLC0415 - the recorder needs it anyway
    out.update(torch_config(torch))
    out.update(environment_config())
    out.update(versions_config())
    return out
