"""The built-in workload pairs of `magneton demo` (docs/diff.md, "magneton demo").

Each module records one variant of one model, twice: a recording pass with
fingerprints (the values, for matching) and a measured pass without them (the
time and energy, as the program really runs):

    python -m magneton.demo.gpt2_blocks --variant addmm --out a.mgt --measured a-measured.mgt

`python -m magneton.demo --case gpt2-conv1d --out DIR` records both variants
of a pair in one process, as `magneton demo` does (__main__.py).
"""
