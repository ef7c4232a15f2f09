"""magneton.start()/stop(): no-ops with one warning outside `magneton record`,
calls into the injection library under it."""

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from magneton import locate

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _library():
    lib = locate.cupti_library()
    return pathlib.Path(lib) if lib else None


def _run(code, env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAGNETON_", "CUDA_INJECTION"))}
    env["PYTHONPATH"] = str(ROOT / "python")
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=120)


def test_outside_record_start_and_stop_warn_once_and_do_nothing():
    r = _run(
        """
        import warnings
        from magneton import control
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert control.start() is False
            assert control.stop() is False
            assert control.recording() is False
        assert len(w) == 1, [str(x.message) for x in w]
        assert "not running under `magneton record`" in str(w[0].message)
        print("ok")
        """,
        {},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


@pytest.mark.skipif(_library() is None, reason="libmagneton_cupti.so not built (no CUDA toolkit)")
def test_under_record_the_calls_reach_the_injection_library(tmp_path):
    lib = str(_library())
    r = _run(
        f"""
        import ctypes, warnings
        from magneton import control
        warnings.simplefilter("error")  # no warning may be raised here
        assert control.start() is True
        assert control.stop() is True
        # CUDA never initialized here, so nothing records yet.
        assert control.recording() is False
        # The same copy the driver would load: its InitializeInjection sees the stop.
        init = ctypes.CDLL({lib!r}).InitializeInjection
        assert init() == 1
        print("ok")
        """,
        {"MAGNETON_CUPTI_LIB": lib, "CUDA_INJECTION64_PATH": lib, "MAGNETON_RECORD_OUTPUT": str(tmp_path / "r"),
         "MAGNETON_RECORD_ENERGY": "0"},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
    assert len(list(tmp_path.glob("r.*.mgt"))) == 1
