"""Runs a Python script as `python SCRIPT ARGS...` would, printing every
thread's Python stack to stderr every PERIOD seconds: where a recording that
runs too long spends its time (the GPU machine has no py-spy or gdb).

    python3 scripts/gpu/where_slow.py PERIOD SCRIPT [ARGS...]
"""
import faulthandler
import runpy
import sys

period, script = float(sys.argv[1]), sys.argv[2]
sys.argv = sys.argv[2:]
faulthandler.dump_traceback_later(period, repeat=True, file=sys.stderr)
runpy.run_path(script, run_name="__main__")
