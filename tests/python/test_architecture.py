"""The stages of docs/architecture.md's whiteboard match the includes: each
stage's sources include headers of the stages it lists, and of no other, and
every folder under src/ is a stage of the whiteboard."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def whiteboard() -> dict[str, set[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = re.search(r"<!-- stages:.*?-->\s*```\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md has no stages block"
    stages = {}
    for line in block.group(1).splitlines():
        stage, _, deps = line.partition("->")
        stages[stage.strip()] = set(deps.split())
    return stages


def test_every_source_folder_is_a_stage():
    folders = {p.name for p in (ROOT / "src").iterdir() if p.is_dir()}
    assert folders == set(whiteboard())


def test_includes_follow_the_whiteboard():
    stages = whiteboard()
    include = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/', re.M)
    wrong = []
    for stage, allowed in stages.items():
        for src in (ROOT / "src" / stage).rglob("*"):
            if src.suffix not in (".h", ".cpp", ".cc"):
                continue
            for target in include.findall(src.read_text(errors="replace")):
                if target in stages and target != stage and target not in allowed:
                    wrong.append(f"{src.relative_to(ROOT)} includes {target}/")
    assert not wrong, wrong
