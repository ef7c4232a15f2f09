"""Reading `magneton diff --json` for the case suite: the top finding in a normal form,
its comparison with a case's expectation, and the RESULTS.md text.

The diff's JSON (docs/diff.md) names run A and run B; the suite always passes the
wasteful side as A and the efficient side as B. Magneton's evidence classes map onto the
suite's root-cause classes: operators -> operators, kernels -> kernels-config,
launch -> launch-layout, and host/CPU evidence -> cpu-side.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CLASS_NAMES = {
    "operators": "operators", "operator": "operators",
    "kernels": "kernels-config", "kernel": "kernels-config", "kernels-config": "kernels-config",
    "launch": "launch-layout", "layout": "launch-layout", "launch-layout": "launch-layout",
    "cpu": "cpu-side", "host": "cpu-side", "cpu-side": "cpu-side",
}
SIDE_OF = {"a": "wasteful", "b": "efficient"}


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and x == x else None  # NaN -> None


def _names(items: Any) -> list[str]:
    out = []
    for it in items or []:
        if isinstance(it, dict) and it.get("name"):
            out.append(str(it["name"]))
        elif isinstance(it, str):
            out.append(it)
    return out


def _side_cost(f: dict, side: str) -> dict:
    s = f.get(side) or {}
    return {"joules": _num(s.get("joules")), "seconds": _num(s.get("seconds")), "source": s.get("source")}


def _findings(doc: dict) -> list[dict]:
    fs = doc.get("findings")
    return [f for f in fs if isinstance(f, dict)] if isinstance(fs, list) else []


def top_finding(doc: dict | None) -> dict | None:
    """The first waste finding (the diff ranks them by joules saved), else the first finding."""
    if not doc:
        return None
    fs = _findings(doc)
    if not fs:
        return None
    waste = [f for f in fs if f.get("verdict") == "waste"]
    f = min(waste, key=lambda x: x.get("rank") or 1e9) if waste else fs[0]
    evidence = [e for e in f.get("evidence") or [] if isinstance(e, dict)]
    kind = f.get("evidence_class") or (evidence[0].get("class") if evidence else None)
    ops, keys = [], []
    for e in evidence:
        for field in ("only_a", "only_b", "all_a", "all_b"):
            ops += _names(e.get(field))
        keys += [c.get("key", "") for c in e.get("config") or [] if isinstance(c, dict)]
        keys += [pd.get("parameter", "") for pd in e.get("params") or [] if isinstance(pd, dict)]
    a, b = _side_cost(f, "a"), _side_cost(f, "b")
    costly = SIDE_OF.get(str(f.get("costly", "")).lower())
    ratio = None
    if a["joules"] and b["joules"]:
        ratio = a["joules"] / b["joules"]
    elif a["seconds"] and b["seconds"]:
        ratio = a["seconds"] / b["seconds"]
    return {
        "verdict": f.get("verdict"), "label": f.get("label", ""), "costly": costly,
        "magneton_class": kind, "class": CLASS_NAMES.get(str(kind).lower()) if kind else None,
        "ops": sorted(set(ops)), "config_keys": sorted(set(k for k in keys if k)),
        "a": a, "b": b, "ratio_w_over_e": ratio,
        "saved_pct_of_run": _num(f.get("saved_pct_of_run")), "why": f.get("why", ""),
        "evidence_summary": [e.get("summary", "") for e in evidence],
        "rules": [r.get("title") or r.get("id") for r in f.get("rules") or [] if isinstance(r, dict)],
        "waste_findings": sum(1 for x in _findings(doc) if x.get("verdict") == "waste"),
        "cost_delta_pct": _num(f.get("cost_delta_pct")), "time_delta_pct": _num(f.get("time_delta_pct")),
    }


def run_totals(doc: dict | None) -> dict:
    """Each run's whole cost as the diff reports it, and the end-to-end saving of its waste findings."""
    runs = (doc or {}).get("runs") or {}
    out = {}
    for key, side in SIDE_OF.items():
        r = runs.get(key) or {}
        out[side] = {"joules": _num(r.get("joules")), "seconds": _num(r.get("seconds")),
                     "energy_measured": r.get("energy_measured"), "replays": r.get("replays"),
                     "iterations": r.get("iterations")}
    summary = (doc or {}).get("summary") or {}
    out["saved_pct_of_run"] = _num(summary.get("saved_pct_of_run"))
    out["unit"] = (doc or {}).get("unit")
    out["config_diff"] = [c.get("key") for c in (doc or {}).get("config_diff") or [] if isinstance(c, dict)]
    return out


def _key_named(expected_key: str, named: list[str]) -> bool:
    """A configuration key counts as named when its last two dotted parts appear in a finding's
    key or differing parameter; "a|b" accepts either (a layout shows as strides or a format)."""
    for alt in expected_key.split("|"):
        tail = ".".join(alt.split(".")[-2:]).lower()
        if any(tail in k.lower() for k in named):
            return True
    return False


def assess(case: str, exp: dict, gt: dict | None, doc: dict | None, error: str, runs: Path) -> dict:
    """Compares the top finding with the expectation: the truly wasting side (measured
    ground truth first), the root-cause class, configuration keys and operators."""
    measured = gt.get("truth") if gt and "error" not in gt else None
    truth = measured or exp["expected_waste_side"]
    row: dict[str, Any] = {"case": case, "exp": exp, "gt": gt, "truth": truth,
                           "truth_source": "ground truth" if measured else "expected.json",
                           "error": error, "finding": None, "match": "no", "why": ""}
    if error:
        row["why"] = error
        if error.startswith("skipped"):
            row["match"] = "skipped"
        return row
    f = top_finding(doc)
    row["finding"] = f
    row["totals"] = run_totals(doc)
    run_sizes = [p.stat().st_size for p in [*runs.glob("*.mgt"), *runs.glob("*.tar.xz")]]
    row["run_kib"] = round(sum(run_sizes) / 1024) if run_sizes else None
    if truth == "none":
        # The ground truth is end to end: "none" means the sides differ by less than its margin
        # (groundtruth.truth). Magneton agrees when its waste findings together save less than
        # that margin of the run; a small region it names can be real extra work.
        margin = 100 * max(0.05, 3 * ((gt or {}).get("ratio_cv") or 0))
        saved = row["totals"]["saved_pct_of_run"] or 0.0
        has_waste = bool(f and f["verdict"] == "waste")
        row["match"] = "no" if has_waste and saved >= margin else "yes"
        if not has_waste:
            row["why"] = "no waste flagged, as the ground truth found none"
        elif saved >= margin:
            row["why"] = (f"Magneton's waste findings save {saved:.1f}% of the run where the ground truth "
                          f"measured no difference beyond {margin:.0f}%")
        else:
            row["why"] = (f"no end-to-end waste, as the ground truth found: the waste findings save "
                          f"{saved:.1f}% of the run (under the {margin:.0f}% margin); the top one is a "
                          f"real but small region")
        return row
    if not f or f["verdict"] != "waste":
        row["why"] = "no waste finding" + (f" (top: {f['verdict']}: {f['why']})" if f else "")
        return row
    side_ok = f["costly"] == truth
    accepted = [exp["root_cause"], *exp.get("also_accept", [])]
    class_ok = f["class"] in accepted
    keys_ok = all(_key_named(k, f["config_keys"]) for k in exp.get("config_keys", []))
    text = " ".join([f["label"], *f["ops"]]).lower()
    ops_ok = not exp.get("ops") or any(op.lower() in text for op in exp["ops"])
    row.update(side_ok=side_ok, class_ok=class_ok, keys_ok=keys_ok, ops_ok=ops_ok)
    problems = []
    if not side_ok:
        problems.append(f"names the {f['costly']} side, the truth is the {truth} side")
    if not class_ok:
        problems.append(f"class {f['magneton_class']} (expected {' or '.join(accepted)})")
    if not keys_ok:
        problems.append(f"configuration key(s) {', '.join(exp['config_keys'])} not named "
                        f"(named: {', '.join(f['config_keys']) or 'none'})")
    if not ops_ok:
        problems.append(f"none of {', '.join(exp['ops'])} named")
    row["match"] = "yes" if side_ok and class_ok and keys_ok else ("partial" if side_ok else "no")
    row["why"] = "; ".join(problems) or "side, class and keys as expected"
    return row


# ----------------------------------------------------------------- presentation

def _f(x: float | None, spec: str, scale: float = 1.0) -> str:
    return "–" if x is None else format(x * scale, spec)


def _gt_cells(gt: dict | None) -> tuple[str, str, str, str]:
    if not gt or "error" in gt or "skipped" in gt:
        return "–", "–", "–", "–"
    w, e = gt["wasteful"], gt["efficient"]
    joules = f"{_f(w['j_per_iter'], '.3f')} / {_f(e['j_per_iter'], '.3f')}"
    ms = f"{_f(w['s_per_iter'], '.2f', 1e3)} / {_f(e['s_per_iter'], '.2f', 1e3)}"
    ratio = f"{_f(gt['ratio'], '.3f')} ±{gt['ratio_cv'] * 100:.1f}% ({gt['metric']})"
    saving = "–"
    if w["j_per_iter"] and e["j_per_iter"]:
        saving = f"{(1 - e['j_per_iter'] / w['j_per_iter']) * 100:+.1f}%"
    return joules, ms, ratio, saving


def summary_table(rows: list[dict]) -> str:
    lines = ["| case | truth (source) | ground truth J/iter W / E | ms/iter W / E | long-window ratio W/E "
             "| Magneton top finding | class | Magneton ratio W/E | match | end-to-end saving of E: GT / Magneton |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        joules, ms, ratio, saving = _gt_cells(r["gt"])
        f = r["finding"]
        if f:
            finding = f"{f['verdict']}: {f['label'] or '(no label)'} [costly: {f['costly']}]"
            cls, mratio = f"{f['class'] or f['magneton_class']}", _f(f["ratio_w_over_e"], ".3f")
        else:
            finding, cls, mratio = (r["error"] or "no finding").replace("|", "/"), "–", "–"
        t = r.get("totals") or {}
        saving += f" / {_f(t.get('saved_pct_of_run'), '.1f')}%" if t.get("saved_pct_of_run") is not None else " / –"
        lines.append(f"| {r['case']} | {r['truth']} ({r['truth_source']}) | {joules} | {ms} | {ratio} "
                     f"| {finding} | {cls} | {mratio} | {r['match']} | {saving} |")
    return "\n".join(lines)


def _detail(r: dict) -> list[str]:
    exp, gt, f = r["exp"], r["gt"], r["finding"]
    out = [f"### {r['case']}", ""]
    src = f"[{exp['issue']}]({exp['url']})" if exp.get("url") else "no public issue"
    out.append(f"- Source: {src}: {exp['summary']}")
    out.append(f"- Expected: {exp['root_cause']} in {exp['region']}"
               + (f"; keys {', '.join(exp['config_keys'])}" if exp["config_keys"] else "")
               + f"; reported waste: {exp['reported_waste_side']}; expectation: {exp['expected_waste_side']} "
               f"({exp['expectation_source']})")
    if gt and "error" not in gt and "skipped" not in gt:
        w, e = gt["wasteful"], gt["efficient"]
        out.append(f"- Ground truth ({gt['metric']}): wasteful {_f(w['j_per_iter'], '.4f')} J, "
                   f"{_f(w['s_per_iter'], '.3f', 1e3)} ms, {_f(w['watts'], '.0f')} W, CPU "
                   f"{_f(w['cpu_s_per_iter'], '.2f', 1e3)} ms/iter; efficient {_f(e['j_per_iter'], '.4f')} J, "
                   f"{_f(e['s_per_iter'], '.3f', 1e3)} ms, {_f(e['watts'], '.0f')} W, CPU "
                   f"{_f(e['cpu_s_per_iter'], '.2f', 1e3)} ms/iter; energy ratio {_f(gt['energy_ratio'], '.3f')}, "
                   f"time ratio {_f(gt['time_ratio'], '.3f')}, CPU ratio {_f(gt['cpu_ratio'], '.2f')}; "
                   f"CV(J) {w['cv_j'] * 100:.1f}% / {e['cv_j'] * 100:.1f}%; truth: {gt['truth']}; "
                   f"outputs agree: {gt['outputs_agree']} (max rel diff {_f(gt['max_rel_diff'], '.2g')})")
        if gt["truth"] != exp["expected_waste_side"]:
            out.append(f"- **The expectation does not hold here**: measured {gt['truth']} vs expected "
                       f"{exp['expected_waste_side']}; the ground truth is what Magneton is judged against.")
    elif gt and "error" in gt:
        out.append(f"- Ground truth failed: {gt['error']}")
    t = r.get("totals")
    if t:
        w, e = t["wasteful"], t["efficient"]
        out.append(f"- Magneton, whole runs ({t['unit'] or 'unit ?'}): wasteful {_f(w['joules'], '.4f')} J / "
                   f"{_f(w['seconds'], '.3f', 1e3)} ms, efficient {_f(e['joules'], '.4f')} J / "
                   f"{_f(e['seconds'], '.3f', 1e3)} ms; end-to-end saving of the waste findings "
                   f"{_f(t['saved_pct_of_run'], '.1f')}%; replay in runs: {w['replays']} / {e['replays']}; "
                   f"configuration keys that differ: {', '.join(t['config_diff']) or 'none'}")
    if f:
        out.append(f"- Magneton: {f['verdict']} `{f['label']}`, costly side {f['costly']}, class "
                   f"{f['magneton_class']}, ratio {_f(f['ratio_w_over_e'], '.3f')} "
                   f"(A {_f(f['a']['joules'], '.4f')} J / {_f(f['a']['seconds'], '.3f', 1e3)} ms, "
                   f"B {_f(f['b']['joules'], '.4f')} J / {_f(f['b']['seconds'], '.3f', 1e3)} ms, "
                   f"source {f['a']['source']}); saved {_f(f['saved_pct_of_run'], '.1f')}% of the run; "
                   f"{f['waste_findings']} waste finding(s)")
        if f["config_keys"]:
            out.append(f"- Keys named: {', '.join(f['config_keys'])}")
        if f["evidence_summary"]:
            out.append(f"- Evidence: {' / '.join(s for s in f['evidence_summary'] if s)}")
    out.append(f"- Match: **{r['match']}**: {r['why']}"
               + (f" (run files {r['run_kib']} KiB)" if r.get("run_kib") is not None else ""))
    return out + [""]


def results_markdown(rows: list[dict], gt: dict, args, date) -> str:
    matched = sum(r["match"] == "yes" for r in rows)
    skipped = sum(r["match"] == "skipped" for r in rows)
    energy = ("energy from NVML's total energy counter (totals: static + dynamic)" if gt.get("gpu")
              else "time only (no energy counter was measured)")
    head = [
        "# Case suite results", "",
        f"Produced by `cases/run_all.py` on {date} ({'GPU: ' + gt['gpu'] if gt.get('gpu') else 'no GPU ground truth'}"
        f"{', idle %.0f W' % gt['idle_watts'] if gt.get('idle_watts') else ''}).",
        f"Ground truth: each side alone in back-to-back loops of {gt.get('seconds', '–')} s, alternated over "
        f"{gt.get('trials', '–')} trials, {energy}. "
        "W = wasteful side (run A), E = efficient side (run B), as the issue reported them; "
        "'truth' names the side that really costs more here.",
        "Magneton: one recorded iteration per side (values) and, for PyTorch sides, a measured pass of "
        "repeated steps, `magneton diff A B --json` (with `--measured-a/-b` where those exist)"
        f"{' (replay requested)' if getattr(args, 'replay', False) else ''}.",
        "", f"**{matched} of {len(rows) - skipped} cases diagnosed as expected**"
        + (f" ({skipped} skipped on this machine)." if skipped else "."), "",
        summary_table(rows), "", "## Per case", "",
    ]
    body = [line for r in rows for line in _detail(r)]
    return "\n".join(head + body)


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text())
