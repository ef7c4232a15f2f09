#!/usr/bin/env bash
# The pip route as a user takes it (docs/install.md): `pip install .` into a
# fresh venv, then a smoke test of the installed package alone, run outside
# the checkout with a clean environment: the command, doctor, the extension
# modules and the native lookups, record_jax in a process that never imported
# torch, and `magneton demo` on the CPU at its tiny size.
#
# torch, transformers and jax come from PyPI as GBs of wheels: the fresh venv
# reuses the shared venv's (scripts/setup.sh) through a .pth file that adds
# its site-packages after the venv's own, the way --system-site-packages
# reuses the system's. pip then counts them as installed, and the build (in
# pip's isolated build environment, with scikit-build-core and pybind11 from
# PyPI or pip's cache) finds torch in the fresh venv as it would in a user's.
#   usage: scripts/test_package.sh [VENV]   VENV: the venv to reuse (default: scripts/setup.sh's)
#   MAGNETON_PACKAGE_KEEP=DIR  keep the venv and the smoke test's files in DIR
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
shared=${1:-$("$here/scripts/setup.sh" | tail -n 1)}
work=${MAGNETON_PACKAGE_KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/magneton-package.XXXXXX")}
[ -n "${MAGNETON_PACKAGE_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
mkdir -p "$work"
venv=$work/venv
rm -rf "$venv"

echo "package: fresh venv $venv, reusing the packages of $shared"
"$shared/bin/python" -m venv "$venv"
site() { "$1" -c 'import sysconfig; print(sysconfig.get_path("purelib"))'; }
site "$shared/bin/python" > "$(site "$venv/bin/python")/magneton-reuse-shared-venv.pth"

echo "package: pip install $here"
. "$here/scripts/compiler_cache.sh"
t0=$(date +%s)
(cd "$work" && env -u PYTHONPATH "$venv/bin/python" -m pip install -q --disable-pip-version-check "$here")
echo "package: installed in $(( $(date +%s) - t0 )) s"

# The smoke test sees only the installed package: no PYTHONPATH, no MAGNETON_*
# settings, the fresh venv's bin first on PATH, a folder outside the checkout.
smoke=$work/smoke
mkdir -p "$smoke"
run() { (cd "$smoke" && env -i HOME="$HOME" TMPDIR="${TMPDIR:-/tmp}" PATH="$venv/bin:/usr/bin:/bin" "$@"); }

run magneton --version
run magneton doctor --json > "$smoke/doctor.json"
run python - "$smoke/doctor.json" <<'EOF'
import json, sys
import magneton
from magneton import locate
doctor = json.load(open(sys.argv[1]))
pkg = magneton.__path__[0]
assert "site-packages" in pkg, f"magneton imported from {pkg}, not the installed package"
assert doctor["python"] == sys.executable, f"doctor checked {doctor['python']}, not this venv's python"
assert "error" not in doctor["torch"], doctor["torch"]
for name, path in (("command", locate.command()), ("rules", locate.rules_dir()), ("cupti", locate.cupti_library())):
    assert path and path.startswith(pkg), f"{name}: {path} is not inside {pkg}"
import magneton._energy  # noqa: F401
print(f"package: magneton {pkg}; command, rules and injection library inside it; doctor used {sys.executable}")
EOF

# record_jax in a program that never imports torch itself: the extension must
# load torch's libraries first (it links libtorch) and write the run.
run python - <<'EOF'
import sys
import jax.numpy as jnp
from magneton.jax_recorder import record_jax
assert "torch" not in sys.modules
rec = record_jax(lambda x: jnp.tanh(x @ x.T).sum(), jnp.ones((8, 8)), path="jax.mgt", energy="none")
print(f"package: record_jax wrote jax.mgt: {rec.summary['ops']} ops")
EOF
run magneton info jax.mgt > /dev/null

run magneton demo --size tiny --iterations 3 --device cpu --out demo > "$smoke/demo.txt" || {
  cat "$smoke/demo.txt"; echo "package: magneton demo failed"; exit 1; }
grep -q "reports: " "$smoke/demo.txt" && [ -s "$smoke/demo/report.html" ]
echo "package: magneton demo wrote demo/report.html and demo/diff.json"
echo "package: smoke test passed"
