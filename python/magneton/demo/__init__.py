"""The built-in workload pairs of `magneton demo` (docs/diff.md, "magneton demo").

Each module records one variant of one model, twice: a recording pass with
fingerprints (the values, for matching) and a measured pass without them (the
time and energy, as the program really runs):

    python -m magneton.demo.gpt2_conv1d --variant addmm --out a.mgt --measured a-measured.mgt
"""
