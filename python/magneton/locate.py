"""Where Magneton's native parts are, from Python: the `magneton` command, the
CUPTI injection library and the rules directory (docs/install.md).

An installed package holds them inside itself (pyproject.toml, CMake's
cmake/python_package.cmake): magneton/bin/magneton, magneton/lib/
libmagneton_cupti.so, magneton/rules/. A checkout has them in its build tree
(build/, or $MAGNETON_BUILD) and in rules/. Explicit settings come first:
$MAGNETON_BIN (the command), $MAGNETON_CUPTI_LIB, $MAGNETON_RULES, as the
command itself reads them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, Optional

__all__ = ["command", "cupti_library", "rules_dir", "checkout"]


def _package_dirs() -> Iterator[Path]:
    # An editable install's package spans the source folder and the installed
    # one (scikit-build-core's redirect): every folder of the package counts.
    import magneton

    for d in getattr(magneton, "__path__", []):
        yield Path(d)


def checkout() -> Optional[Path]:
    """The source checkout this package is imported from (python/magneton), or None."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "CMakeLists.txt").is_file() and (root / "rules").is_dir() else None


def _build_dirs() -> Iterator[Path]:
    if os.environ.get("MAGNETON_BUILD"):
        yield Path(os.environ["MAGNETON_BUILD"])
    root = checkout()
    if root is not None:
        yield root / "build"


def _first(env: str, candidates, test) -> Optional[str]:
    if os.environ.get(env):
        return os.environ[env]
    for c in candidates:
        if test(c):
            return str(c)
    return None


def command() -> Optional[str]:
    """The `magneton` command (the C++ CLI), or None when none is built or installed."""
    return _first("MAGNETON_BIN",
                  [d / "bin" / "magneton" for d in _package_dirs()] + [d / "magneton" for d in _build_dirs()],
                  lambda p: p.is_file() and os.access(p, os.X_OK))


def cupti_library() -> Optional[str]:
    """libmagneton_cupti.so, or None when it is not built (no CUDA toolkit at build time)."""
    return _first("MAGNETON_CUPTI_LIB",
                  [d / "lib" / "libmagneton_cupti.so" for d in _package_dirs()] +
                  [d / "libmagneton_cupti.so" for d in _build_dirs()],
                  Path.is_file)


def rules_dir() -> Optional[str]:
    """The directory of the shipped rules (rules/*.json)."""
    root = checkout()
    return _first("MAGNETON_RULES",
                  [d / "rules" for d in _package_dirs()] + ([root / "rules"] if root else []),
                  Path.is_dir)
