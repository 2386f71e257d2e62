"""scripts/check_install_beside.py, which .ci/run runs against PyPI (issue 52), tells a
downgrade from an upgrade and names the cap behind it with its chain from conceptcomb."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location(
    "check_install_beside", ROOT / "scripts" / "check_install_beside.py"
)
beside = importlib.util.module_from_spec(spec)
spec.loader.exec_module(beside)


def _item(name: str, version: str, *requires: str) -> dict:
    return {"metadata": {"name": name, "version": version, "requires_dist": list(requires)}}


# The shape of what pip planned on 2026-12-02 beside boto3 1.44.8 (inspect-ai's fsspec cap).
REPORT = {
    "install": [
        _item("conceptcomb", "0.1.0", "inspect-ai<0.4,>=0.3.285", "numpy>=1.24"),
        _item("inspect-ai", "0.3.285", "fsspec<=2026.6.0,>=2023.1.0", "s3fs>=2023", "boto3"),
        _item("s3fs", "2026.6.0", "aiobotocore<4,>=3.10", "fsspec==2026.6.0"),
        _item("aiobotocore", "3.10.0", "botocore<1.43.118,>=1.43.115"),
        _item("botocore", "1.43.117"),
        _item("boto3", "1.43.117", "botocore<1.44.0,>=1.43.117"),
        _item("fsspec", "2026.6.0"),
        _item("numpy", "2.4.0", 'pytest; extra == "test"'),
    ]
}


def test_downgrades_name_their_caps_and_chains() -> None:
    before = {"boto3": "1.44.8", "botocore": "1.44.8", "fsspec": "2026.9.0", "numpy": "2.3.0"}
    found = {
        name: (had, planned, caps) for name, had, planned, caps in beside.downgrades(before, REPORT)
    }
    assert set(found) == {"boto3", "botocore", "fsspec"}  # numpy goes up: no downgrade
    assert found["botocore"][:2] == ("1.44.8", "1.43.117")
    assert (
        "aiobotocore needs botocore<1.43.118,>=1.43.115 "
        "(conceptcomb -> inspect-ai -> s3fs -> aiobotocore)" in found["botocore"][2]
    )
    assert (
        "inspect-ai needs fsspec<=2026.6.0,>=2023.1.0 (conceptcomb -> inspect-ai)"
        in found["fsspec"][2]
    )
    assert found["boto3"][2] == ["no cap of its own: follows another"]


def test_nothing_installed_nothing_downgraded() -> None:
    assert beside.downgrades({}, REPORT) == []
