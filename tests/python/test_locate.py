"""magneton.locate from a checkout: the command, the injection library and the
rules are found without settings, and explicit settings win. (From an
installed package: scripts/test_package.sh.)"""

import os
from pathlib import Path

from magneton import locate

ROOT = Path(__file__).resolve().parents[2]


def test_a_checkout_finds_its_rules_and_its_build(monkeypatch):
    for var in ("MAGNETON_BIN", "MAGNETON_CUPTI_LIB", "MAGNETON_RULES", "MAGNETON_BUILD"):
        monkeypatch.delenv(var, raising=False)
    assert locate.checkout() == ROOT
    assert Path(locate.rules_dir()) == ROOT / "rules"
    built = ROOT / "build" / "magneton"
    assert locate.command() == (str(built) if built.is_file() else None)
    lib = ROOT / "build" / "libmagneton_cupti.so"
    assert locate.cupti_library() == (str(lib) if lib.is_file() else None)


def test_settings_come_first(monkeypatch, tmp_path):
    (tmp_path / "magneton").write_text("#!/bin/sh\n")
    os.chmod(tmp_path / "magneton", 0o755)
    monkeypatch.delenv("MAGNETON_BIN", raising=False)
    monkeypatch.setenv("MAGNETON_BUILD", str(tmp_path))
    assert locate.command() == str(tmp_path / "magneton")
    monkeypatch.setenv("MAGNETON_BIN", "/opt/magneton")
    monkeypatch.setenv("MAGNETON_RULES", "/opt/rules")
    assert locate.command() == "/opt/magneton"
    assert locate.rules_dir() == "/opt/rules"


def test_the_build_directory_of_a_setting_is_searched_before_the_checkouts(monkeypatch, tmp_path):
    monkeypatch.delenv("MAGNETON_BIN", raising=False)
    monkeypatch.delenv("MAGNETON_CUPTI_LIB", raising=False)
    monkeypatch.setenv("MAGNETON_BUILD", str(tmp_path))
    (tmp_path / "libmagneton_cupti.so").write_bytes(b"")
    assert locate.cupti_library() == str(tmp_path / "libmagneton_cupti.so")
