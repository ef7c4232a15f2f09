"""The `magneton` command of an installed package (pyproject.toml's
[project.scripts]): runs the C++ CLI that the package holds, in place of this
process, with $MAGNETON_PYTHON set to this interpreter unless it is set
already, so that `magneton demo` and `magneton doctor` use the environment
Magneton was installed into (docs/install.md)."""

from __future__ import annotations

import os
import sys

from magneton import locate


def main() -> None:
    binary = locate.command()
    if binary is None:
        sys.stderr.write("magneton: the magneton command is not built or installed here "
                         "(pip install ., or scripts/build.sh in a checkout)\n")
        sys.exit(2)
    os.environ.setdefault("MAGNETON_PYTHON", sys.executable)
    os.execv(binary, ["magneton"] + sys.argv[1:])


if __name__ == "__main__":
    main()
