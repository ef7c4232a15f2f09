"""Merges the cases of a newer groundtruth.json (groundtruth.py's output) into the committed one:
each merged case keeps when, how long and on which GPU it was measured (its row in RESULTS.md
says so), since the committed file's header describes the call that measured the rest.

    python cases/merge_groundtruth.py BASE NEW OUT [--cases a,b]
"""
import argparse
import json


def merge(base: dict, new: dict, cases: list[str] | None = None) -> list[str]:
    merged = []
    for name, case in new.get("cases", {}).items():
        if cases and name not in cases:
            continue
        case.setdefault("measured", {k: new.get(k) for k in ("date", "seconds", "trials", "gpu")})
        base["cases"][name] = case
        merged.append(name)
    return merged


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("base")
    p.add_argument("new")
    p.add_argument("out")
    p.add_argument("--cases", default="", help="only these cases (comma-separated)")
    args = p.parse_args()
    base, new = json.load(open(args.base)), json.load(open(args.new))
    for name in merge(base, new, [c for c in args.cases.split(",") if c] or None):
        print(f"ground truth merged: {name}")
    with open(args.out, "w") as f:
        json.dump(base, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
