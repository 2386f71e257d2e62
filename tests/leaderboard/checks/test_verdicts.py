"""Verdicts remembered (issue 42): ``export`` and ``report`` of a bundle that
``validate-bundle`` checked reuse its verdict; ``--recheck`` checks it again; an edited
bundle (another content sha256, or one its content does not hash to) is always checked.

A real CGGC bundle (5 test items answered by their reference sentences, through
``conceptcomb score --samples-output`` and ``submit-bundle``), the real commands run in this
process, and the checks counted where they run
(`conceptcomb.leaderboard.checks.validate.check_bundle`, as
`conceptcomb.leaderboard.checks.verdicts` calls it); each test has a verdict folder of its own.
Slow: making and first checking the bundle starts METEOR's JVM and loads spaCy (~20 s)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conceptcomb.leaderboard.bundles.bundle import content_sha256
from conceptcomb.leaderboard.checks import verdicts
from conceptcomb.testing.cggc_references import cggc_bundle
from tests.leaderboard.checks.test_evidence import run_cli

pytestmark = pytest.mark.slow
ITEMS = 5
LINE = f"cggc_ood: partial ({ITEMS} of the 15985 test items"
REUSED = "--recheck checks it again"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return cggc_bundle(tmp_path_factory.mktemp("refs"), limit=ITEMS)


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[object]:
    """The bundles checked from now on (one entry per check), verdicts kept in tmp_path."""
    monkeypatch.setattr(verdicts, "verdicts_dir", lambda: tmp_path / "verdicts")
    seen: list[object] = []
    real = verdicts.check_bundle

    def counted(bundle: object, *args: object, **kwargs: object) -> object:
        seen.append(bundle)
        return real(bundle, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(verdicts, "check_bundle", counted)
    return seen


def _export(bundle: Path, out: Path, *options: str) -> tuple[int, str]:
    return run_cli("export", "--to", "eee", str(bundle), "--out", str(out),
                   "--model-id", "someone/model", *options)  # fmt: skip


def test_export_and_report_reuse_the_verdict_of_validate_bundle(
    bundle: Path, checks: list[object], tmp_path: Path
) -> None:
    code, printed = run_cli("validate-bundle", str(bundle))
    assert code == 0 and ": valid" in printed and LINE in printed, printed
    assert len(checks) == 1 and len(list((tmp_path / "verdicts").glob("*.json"))) == 1
    code, printed = _export(bundle, tmp_path / "eee")
    assert code == 0, printed
    assert len(checks) == 1, "export checked the bundle again"
    assert REUSED in printed and LINE in printed, printed
    assert list((tmp_path / "eee" / "data").rglob("*.json"))  # the files are written
    code, printed = run_cli("report", str(bundle), "--out", str(tmp_path / "report"),
                            "--no-plots", "--no-published")  # fmt: skip
    assert code == 0 and len(checks) == 1, printed
    assert "verdict of its check at" in printed and REUSED in printed
    assert "partial" in (tmp_path / "report" / "cggc_table4.csv").read_text(encoding="utf-8")


def test_recheck_checks_the_bundle_again(
    bundle: Path, checks: list[object], tmp_path: Path
) -> None:
    assert run_cli("validate-bundle", str(bundle))[0] == 0 and len(checks) == 1
    code, printed = _export(bundle, tmp_path / "eee", "--recheck")
    assert code == 0 and len(checks) == 2 and REUSED not in printed and LINE in printed, printed
    code, printed = run_cli("report", str(bundle), "--out", str(tmp_path / "report"),
                            "--no-plots", "--no-published", "--recheck")  # fmt: skip
    assert code == 0 and len(checks) == 3 and REUSED not in printed, printed
    code, printed = _export(bundle, tmp_path / "eee2")  # the new verdict, remembered
    assert code == 0 and len(checks) == 3 and REUSED in printed, printed


def test_an_edited_bundle_never_reuses_a_verdict(
    bundle: Path, checks: list[object], tmp_path: Path
) -> None:
    assert run_cli("validate-bundle", str(bundle))[0] == 0 and len(checks) == 1
    data = json.loads(bundle.read_text(encoding="utf-8"))
    # Resealed after an edit, as `submit-bundle` would: another content sha256, checked.
    data["tasks"][0]["metrics"]["bleu4"]["value"] = 99.0
    data["content_sha256"] = content_sha256(data)
    resealed = tmp_path / "resealed.bundle.json"
    resealed.write_text(json.dumps(data), encoding="utf-8")
    code, printed = _export(resealed, tmp_path / "eee")
    assert code == 2 and len(checks) == 2 and REUSED not in printed
    # Edited, its content_sha256 left as it was (the validated bundle's): checked, INVALID.
    data["content_sha256"] = json.loads(bundle.read_text(encoding="utf-8"))["content_sha256"]
    edited = tmp_path / "edited.bundle.json"
    edited.write_text(json.dumps(data), encoding="utf-8")
    code, printed = _export(edited, tmp_path / "eee")
    assert code == 2 and len(checks) == 3 and REUSED not in printed
    assert len(list((tmp_path / "verdicts").glob("*.json"))) == 1  # no invalid verdict kept


def test_a_verdict_is_named_by_all_that_decides_it(bundle: Path, tmp_path: Path) -> None:
    data = json.loads(bundle.read_text(encoding="utf-8"))
    key = verdicts.verdict_key(data, None)
    assert key is not None and key == verdicts.verdict_key(json.loads(json.dumps(data)), None)
    assert verdicts.verdict_key(data, str(tmp_path)) != key  # another data folder
    assert verdicts.verdict_key({**data, "content_sha256": "0" * 64}, None) is None
    assert verdicts.verdict_key({**data, "notes": ["x"]}, None) is None  # not resealed
    assert verdicts.verdict_key([data], None) is None


def test_an_unreadable_verdict_is_checked_again(
    bundle: Path, checks: list[object], tmp_path: Path
) -> None:
    assert run_cli("validate-bundle", str(bundle))[0] == 0
    (stored,) = (tmp_path / "verdicts").glob("*.json")
    stored.write_text('{"format": 1, "tasks": [', encoding="utf-8")  # cut off
    code, printed = _export(bundle, tmp_path / "eee")
    assert code == 0 and len(checks) == 2 and REUSED not in printed, printed
    assert json.loads(stored.read_text(encoding="utf-8"))["tasks"]  # written again, whole
