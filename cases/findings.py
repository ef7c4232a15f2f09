"""Reading `magneton diff --json` for the case suite: the top finding in a normal form, the
suite's one judging rule (judge), and the RESULTS.md text.

The diff's JSON (docs/diff.md) names run A and run B; the suite always passes the
wasteful side as A and the efficient side as B. Magneton's evidence classes map onto the
suite's root-cause classes: operators -> operators, kernels -> kernels-config,
launch -> launch-layout, and host/CPU evidence -> cpu-side.

The rule (cases/README.md, "How a case is judged") is implemented once, in judge().
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CLASS_NAMES = {
    "operators": "operators", "operator": "operators",
    "kernels": "kernels-config", "kernel": "kernels-config", "kernels-config": "kernels-config",
    "launch": "launch-layout", "layout": "launch-layout", "launch-layout": "launch-layout",
    "arguments": "arguments", "argument": "arguments",
    "cpu": "cpu-side", "host": "cpu-side", "cpu-side": "cpu-side", "timeline": "timeline",
}
SIDE_OF = {"a": "wasteful", "b": "efficient"}

# The saving Magneton claims agrees with the ground truth's when it is within this many
# points of it, or within this share of it, whichever is wider.
SAVING_POINTS = 5.0
SAVING_RELATIVE = 0.25


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


def ratio_unit(f: dict) -> str:
    """What a finding's costs are: GPU joules, CPU joules (RAPL or the CPU-time estimate), or
    seconds where no energy was compared."""
    a, b = f["a"], f["b"]
    if a["joules"] is None or b["joules"] is None or a["source"] == "time":
        return "s, time"
    if f["class"] == "cpu-side":
        return "J CPU, estimate" if a["source"] == "estimate" else "J CPU, RAPL"
    return "J"


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
    use_joules = a["joules"] is not None and b["joules"] is not None and a["source"] != "time"
    hi, lo = (a["joules"], b["joules"]) if use_joules else (a["seconds"], b["seconds"])
    out = {
        "verdict": f.get("verdict"), "label": f.get("label", ""),
        "costly": SIDE_OF.get(str(f.get("costly", "")).lower()),
        "magneton_class": kind, "class": CLASS_NAMES.get(str(kind).lower()) if kind else None,
        "ops": sorted(set(ops)), "config_keys": sorted(set(k for k in keys if k)),
        "a": a, "b": b, "ratio_w_over_e": hi / lo if hi is not None and lo else None,
        "saved_pct_of_run": _num(f.get("saved_pct_of_run")), "why": f.get("why", ""),
        "evidence_summary": [e.get("summary", "") for e in evidence],
        "rules": [r.get("title") or r.get("id") for r in f.get("rules") or [] if isinstance(r, dict)],
        "waste_findings": sum(1 for x in fs if x.get("verdict") == "waste"),
        "cost_delta_pct": _num(f.get("cost_delta_pct")), "time_delta_pct": _num(f.get("time_delta_pct")),
    }
    out["unit"] = ratio_unit(out)
    return out


def run_totals(doc: dict | None) -> dict:
    """Each run's whole cost as the diff reports it, and the end-to-end saving of its waste findings."""
    runs = (doc or {}).get("runs") or {}
    out = {}
    for key, side in SIDE_OF.items():
        r = runs.get(key) or {}
        out[side] = {"joules": _num(r.get("joules")), "seconds": _num(r.get("seconds")),
                     "energy_measured": r.get("energy_measured"), "replays": r.get("replays"),
                     "iterations": r.get("iterations"), "measured_repeats": r.get("measured_repeats")}
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


# ----------------------------------------------------------------- the rule

def gt_saving(gt: dict, truth: str) -> float | None:
    """The ground truth's end-to-end saving, in % of the wasting side, on the quantity it
    judged (groundtruth.py: GPU energy, the process's CPU time, or time on a CPU run)."""
    per = {"gpu_energy": "j_per_iter", "cpu_time": "cpu_s_per_iter", "time": "s_per_iter"}.get(gt.get("metric"))
    lean = "efficient" if truth == "wasteful" else "wasteful"
    if per is None or truth not in ("wasteful", "efficient"):
        return None
    hi, lo = (gt.get(truth) or {}).get(per), (gt.get(lean) or {}).get(per)
    return (1 - lo / hi) * 100 if hi and lo is not None else None


def magneton_saving(f: dict) -> float | None:
    """The end-to-end saving Magneton claims for its top finding, in % of the costlier run.
    A host finding covers the whole process, so its own two costs are the run's CPU energy."""
    if f["class"] == "cpu-side":
        hi, lo = (f["a"], f["b"]) if f["costly"] == "wasteful" else (f["b"], f["a"])
        unit = "joules" if f["unit"].startswith("J") else "seconds"
        return (1 - lo[unit] / hi[unit]) * 100 if hi[unit] and lo[unit] is not None else None
    return f["saved_pct_of_run"]


def energy_problem(f: dict, metric: str | None) -> str:
    """Why the finding does not compare what the ground truth measured ("" when it does)."""
    if metric == "gpu_energy" and f["unit"] != "J":
        return (f"compares {f['unit']} where GPU energy was asked (the diff fell back to time: too few "
                f"sensor readings, or no energy measured)" if f["unit"].startswith("s")
                else f"compares {f['unit']} where GPU energy was asked")
    if metric == "cpu_time" and not f["unit"].startswith("J CPU"):
        return f"compares {f['unit']} where the process's CPU energy was asked"
    return ""


def aa_summary(aa: dict | None) -> dict | None:
    """The A/A pair's diff (the wasteful side recorded twice): its waste findings; None where no
    A/A run was recorded."""
    if aa is None:
        return None
    waste = [f for f in _findings(aa) if f.get("verdict") in ("waste", "trade-off")]
    return {"findings": len(waste), "top": waste[0].get("label", "") if waste else ""}


def judge(case: str, exp: dict, gt: dict | None, doc: dict | None, error: str,
          aa: dict | None = None) -> tuple[str, list[str]]:
    """The suite's one rule. Returns ("yes" | "no" | "skipped", reasons); every "no" has reasons.

    A truth of "none" is matched only by no waste finding. Otherwise the top waste finding must
    name the truly wasting side, have the expected class, name the expected configuration keys
    and one of the case's operators (or kernels, or range), compare energy where energy was
    measured, and claim an end-to-end saving within max(5 points, 25% relative) of the ground
    truth's. Either way, where the case's A/A pair (`aa`, its diff) was recorded, it must give no
    finding: a finding the same program against itself also gets is not backed."""
    match, reasons = _judge_pair(exp, gt, doc, error)
    a = aa_summary(aa)
    if match != "skipped" and a and a["findings"]:
        noise = (f"its A/A pair (the wasteful side recorded twice) gives {a['findings']} finding(s) "
                 f"(top: {a['top']})")
        return "no", [noise] + (reasons if match == "no" else [])
    return match, reasons


def _judge_pair(exp: dict, gt: dict | None, doc: dict | None, error: str) -> tuple[str, list[str]]:
    """judge, on the pair alone."""
    if error:
        return ("skipped" if error.startswith("skipped") else "no"), [error]
    if not gt or "error" in gt or not gt.get("truth"):
        why = gt.get("error") if gt and "error" in gt else "not measured"
        return "no", [f"no ground truth to judge against ({why})"]
    truth = gt["truth"]
    fs = _findings(doc or {})
    waste = [x for x in fs if x.get("verdict") == "waste"]
    f = top_finding(doc)
    if truth == "none":
        if not waste:
            return "yes", ["no waste finding, as the ground truth measured no difference"]
        return "no", [f"the ground truth measured no difference, Magneton flags {len(waste)} waste finding(s) "
                      f"(top: {f['label']}, {f['costly']} side)"]
    if not f or f["verdict"] != "waste":
        return "no", ["no waste finding" + (f" (top: {f['verdict']}: {f['why']})" if f else "")]
    problems = []
    if f["costly"] != truth:
        problems.append(f"names the {f['costly']} side, the truth is the {truth} side")
    accepted = [exp["root_cause"], *exp.get("also_accept", [])]
    if f["class"] not in accepted:
        problems.append(f"class {f['magneton_class']} (expected {' or '.join(accepted)})")
    missing = [k for k in exp.get("config_keys", []) if not _key_named(k, f["config_keys"])]
    if missing:
        problems.append(f"configuration key(s) {', '.join(missing)} not named "
                        f"(named: {', '.join(f['config_keys']) or 'none'})")
    text = " ".join([f["label"], *f["ops"]]).lower()
    if exp.get("ops") and not any(op.lower() in text for op in exp["ops"]):
        problems.append(f"names none of the case's operators ({', '.join(exp['ops'])})")
    if p := energy_problem(f, gt.get("metric")):
        problems.append(p)
    g, m = gt_saving(gt, truth), magneton_saving(f)
    if g is None or m is None:
        problems.append("no end-to-end saving to compare" + (" (ground truth)" if g is None else " (Magneton)"))
    elif abs(m - g) > (allowed := max(SAVING_POINTS, SAVING_RELATIVE * abs(g))):
        problems.append(f"claims an end-to-end saving of {m:.1f}% where the ground truth measured {g:.1f}% "
                        f"(allowed: within {allowed:.1f} points)")
    if problems:
        return "no", problems
    return "yes", [f"side, class, keys, operators and end-to-end saving ({m:.1f}% against {g:.1f}%) as the rule asks"]


def assess(case: str, exp: dict, gt: dict | None, doc: dict | None, error: str, provenance: dict | None = None,
           aa: dict | None = None) -> dict:
    """One row of RESULTS.md: the judgement and what it rests on (`aa`: the A/A pair's diff)."""
    match, reasons = judge(case, exp, gt, doc, error, aa)
    truth = gt.get("truth") if gt and "error" not in gt else None
    f = None if error else top_finding(doc)
    return {"case": case, "exp": exp, "gt": gt, "truth": truth or "–", "error": error,
            "finding": f, "totals": None if error else run_totals(doc),
            "match": match, "why": "; ".join(reasons), "provenance": provenance or {}, "aa": aa_summary(aa),
            "saving": {"gt": gt_saving(gt, truth) if truth else None, "magneton": magneton_saving(f) if f else None}}


# ----------------------------------------------------------------- presentation

def _f(x: float | None, spec: str, scale: float = 1.0) -> str:
    return "–" if x is None else format(x * scale, spec)


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def _gt_cells(gt: dict | None) -> tuple[str, str, str]:
    if not gt or "error" in gt or "skipped" in gt:
        return "–", "–", "–"
    w, e = gt["wasteful"], gt["efficient"]
    joules = f"{_f(w['j_per_iter'], '.3f')} / {_f(e['j_per_iter'], '.3f')}"
    ms = f"{_f(w['s_per_iter'], '.2f', 1e3)} / {_f(e['s_per_iter'], '.2f', 1e3)}"
    ratio = f"{_f(gt['ratio'], '.3f')} ±{gt['ratio_cv'] * 100:.1f}% ({gt['metric']})"
    return joules, ms, ratio


def summary_table(rows: list[dict]) -> str:
    lines = ["| case | truth | ground truth J/iter W / E | ms/iter W / E | long-window ratio W/E (metric) "
             "| Magneton top finding | class | Magneton ratio W/E (unit) | end-to-end saving: GT / Magneton "
             "| A/A | match | why |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        joules, ms, ratio = _gt_cells(r["gt"])
        f = r["finding"]
        if f:
            finding = f"{f['verdict']}: {f['label'] or '(no label)'} [costly: {f['costly']}]"
            cls = f"{f['class'] or f['magneton_class']}"
            mratio = f"{_f(f['ratio_w_over_e'], '.3f')} ({f['unit']})"
        else:
            finding, cls, mratio = "–", "–", "–"
        s = r["saving"]
        saving = f"{_f(s['gt'], '.1f')}% / {_f(s['magneton'], '.1f')}%"
        a = r.get("aa")
        aa = "–" if a is None else "clean" if not a["findings"] else f"{a['findings']} finding(s)"
        lines.append(f"| {r['case']} | {r['truth']} | {joules} | {ms} | {ratio} | {_cell(finding)} | {cls} "
                     f"| {mratio} | {saving} | {aa} | {r['match']} | {_cell(r['why'])} |")
    return "\n".join(lines)


def parse_summary(text: str) -> dict[str, dict]:
    """case -> its top finding, class and match, from a summary table that summary_table wrote."""
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 12 and cells[0] not in ("case", "---"):
            out[cells[0]] = {"finding": cells[5], "class": cells[6], "aa": cells[9], "match": cells[10]}
    return out


def _provenance_line(p: dict) -> str:
    if not p:
        return "- Run files: none committed"
    files = ", ".join(f"{n} ({k} KiB)" for n, k in p.get("files", []))
    recorded = p.get("recorded") or "recording date not stored"
    writer = ", ".join(sorted(set(p.get("writers", [])))) or "–"
    return f"- Run files: {files}; recorded {recorded}; written by {writer}"


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
        measured = gt.get("measured") or {}
        when = (", measured " + measured["date"] if measured.get("date") else "") + \
            (" on " + measured["gpu"] if measured.get("gpu") else "")
        out.append(f"- Ground truth ({gt['metric']}{when}): wasteful "
                   f"{_f(w['j_per_iter'], '.4f')} J, {_f(w['s_per_iter'], '.3f', 1e3)} ms, {_f(w['watts'], '.0f')} W, "
                   f"CPU {_f(w['cpu_s_per_iter'], '.2f', 1e3)} ms/iter; efficient {_f(e['j_per_iter'], '.4f')} J, "
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
    else:
        out.append("- Ground truth: not measured")
    out.append(_provenance_line(r["provenance"]))
    t = r.get("totals")
    if t:
        w, e = t["wasteful"], t["efficient"]
        out.append(f"- Magneton, whole runs per iteration ({t['unit'] or 'unit ?'}): wasteful {_f(w['joules'], '.4f')} J / "
                   f"{_f(w['seconds'], '.3f', 1e3)} ms, efficient {_f(e['joules'], '.4f')} J / "
                   f"{_f(e['seconds'], '.3f', 1e3)} ms; measured-pass repetitions {w['measured_repeats']} / "
                   f"{e['measured_repeats']}; all waste findings together save {_f(t['saved_pct_of_run'], '.1f')}%; "
                   f"replay in runs: {w['replays']} / {e['replays']}; configuration keys that differ: "
                   f"{', '.join(t['config_diff'][:12]) or 'none'}"
                   + (f" and {len(t['config_diff']) - 12} more" if len(t["config_diff"]) > 12 else ""))
    if f:
        out.append(f"- Magneton: {f['verdict']} `{f['label']}`, costly side {f['costly']}, class "
                   f"{f['magneton_class']}, ratio {_f(f['ratio_w_over_e'], '.3f')} ({f['unit']}; "
                   f"A {_f(f['a']['joules'], '.4f')} J / {_f(f['a']['seconds'], '.3f', 1e3)} ms, "
                   f"B {_f(f['b']['joules'], '.4f')} J / {_f(f['b']['seconds'], '.3f', 1e3)} ms, "
                   f"source {f['a']['source']}); saves {_f(f['saved_pct_of_run'], '.1f')}% of the run; "
                   f"{f['waste_findings']} waste finding(s)")
        if f["config_keys"]:
            out.append(f"- Keys named: {', '.join(f['config_keys'])}")
        if f["evidence_summary"]:
            out.append(f"- Evidence: {' / '.join(s for s in f['evidence_summary'] if s)}")
    a = r.get("aa")
    if a is not None:
        out.append(f"- A/A pair (the wasteful side recorded twice): "
                   + ("no finding" if not a["findings"] else f"{a['findings']} finding(s), top: `{a['top']}`"))
    out.append(f"- Match: **{r['match']}**: {r['why']}")
    return out + [""]


RULE = ("A row is **yes** when the top waste finding names the side that the ground truth measured as "
        "wasting, has the expected class, names the expected configuration keys and one of the case's "
        "operators (or kernels, or range), compares energy where the ground truth measured energy, and "
        "claims an end-to-end saving within max(5 points, 25% relative) of the ground truth's; a truth of "
        "\"none\" is matched only by no waste finding; where the case's A/A pair (the wasteful side "
        "recorded twice) was recorded, it must give no finding. Anything else is **no**, with why "
        "(cases/README.md, \"How a case is judged\").")


def results_markdown(rows: list[dict], gt: dict, provenance: dict) -> str:
    """RESULTS.md, all of it. `provenance`: how the rows were produced (run_all.provenance)."""
    matched = sum(r["match"] == "yes" for r in rows)
    skipped = [r["case"] for r in rows if r["match"] == "skipped"]
    energy = ("energy from NVML's total energy counter (totals: static + dynamic)" if gt.get("gpu")
              else "time only (no energy counter was measured)")
    head = [
        "# Case suite results", "",
        "Written by `cases/run_all.py`; do not edit by hand.", "",
        f"- Produced: {provenance['produced']}",
        f"- Repository: commit {provenance['commit']}",
        f"- Magneton: {provenance['magneton']}",
        f"- Ground truth: {provenance['groundtruth']} ({'GPU: ' + gt['gpu'] if gt.get('gpu') else 'no GPU'}"
        f"{', idle %.0f W' % gt['idle_watts'] if gt.get('idle_watts') else ''}; measured {gt.get('date', '–')}, "
        f"later cases, and cases measured on another GPU, where their row says so): each side alone in back-to-back loops of {gt.get('seconds', '–')} s, "
        f"alternated over {gt.get('trials', '–')} trials, {energy}." + (f" Note: {gt['note']}." if gt.get("note") else ""),
        "- W = wasteful side (run A), E = efficient side (run B), as the issue reported them; 'truth' names the "
        "side that really costs more here. Savings are end to end, in % of the wasting side, on the ground "
        "truth's metric (GPU energy; the process's CPU energy for cpu-side cases).", "",
        RULE, "",
        f"**{matched} of {len(rows)} cases diagnosed**"
        + (f" ({len(skipped)} not run on this machine: {', '.join(skipped)})." if skipped else "."), "",
        summary_table(rows), "", "## Per case", "",
    ]
    body = [line for r in rows for line in _detail(r)]
    return "\n".join(head + body)


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text())
