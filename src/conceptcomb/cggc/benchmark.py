"""CGGC (compositional generalization, graph-grounded generative commonsense) as the package
sees it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conceptcomb.common.contract import PERCENT, Benchmark, MetricInfo

if TYPE_CHECKING:
    from conceptcomb.common.results import ScoreReport
    from conceptcomb.scorers.judge_settings import JudgeSettings


def tasks() -> dict[str, list[MetricInfo]]:
    from conceptcomb.cggc.metrics import METRICS
    from conceptcomb.cggc.tasks import all_specs, verified_specs
    from conceptcomb.cggc.verification import SUFFIX, VERIFIED_SHARE, VERIFIER_FAILURES

    plain = list(METRICS)
    # The verifier (an LLM judge) decides which items the *_verified metrics keep.
    verified = [
        *plain,
        *(replace(i, name=i.name + SUFFIX, judged=True) for i in plain),
        MetricInfo(VERIFIED_SHARE, scale=PERCENT, judged=True),
        MetricInfo(VERIFIER_FAILURES, False, "sum", judged=True),
    ]
    found = {"cggc": plain}  # the Inspect task of that name (lm-eval: the group)
    found.update({spec.name: plain for spec in all_specs()})
    found.update({spec.name: verified for spec in verified_specs()})
    return found


def datasets() -> dict[str, Any]:
    from conceptcomb.cggc.dataset_build.sources import CN100K_DATASET, COMMONGEN_DATASET

    # What CGGC is built from (`conceptcomb cggc build` fetches them when not named); the
    # canonical build ships inside the package.
    return {"cggc-commongen": COMMONGEN_DATASET, "cggc-conceptnet": CN100K_DATASET}


def local_data_records(data_dir: str | None) -> list[dict[str, Any]]:
    """The CGGC dataset the tasks read (the shipped one, or the user's own build): its
    files' sha256 and its identity, ``dataset_sha256`` (`conceptcomb.cggc.data`)."""
    from conceptcomb.cggc.data import PACKAGED_DIR, PACKAGED_SHA256, dataset_dir, load_dataset
    from conceptcomb.cggc.evidence import file_digests
    from conceptcomb.common.errors import ConceptcombError

    try:
        folder = dataset_dir(data_dir)  # else CONCEPTCOMB_DATA_DIR if it holds CGGC, else shipped
        shipped = folder == PACKAGED_DIR
        identity = PACKAGED_SHA256 if shipped else load_dataset(folder).sha256
    except ConceptcombError:
        return []
    # The uncompressed files' sha256, as the manifest lists them (gzipped or not, the same
    # items: the evidence's ids name them).
    files = {
        f"{stem}.jsonl": {"sha256": sha, "checked_locally": True}
        for stem, sha in file_digests(str(folder)).items()
    }
    title = "CGGC as shipped with conceptcomb" if shipped else "CGGC built by the user"
    record = {"kind": "built", "key": "cggc", "title": title, "dataset_sha256": identity}
    return [{**record, "files": files}]


def rescore(
    task: str,
    predictions: Path,
    settings: JudgeSettings,
    samples_output: Path | None,
    options: dict[str, Any],
) -> ScoreReport:
    """``conceptcomb score``: the saved replies scored as the task scores them (the judge
    verifies the relations of ``_verified`` tasks)."""
    from conceptcomb.cggc.rescore import rescore as rescore_replies

    return rescore_replies(task, predictions, settings, samples_output)


def judged(task: str) -> bool:
    """The ``_verified`` tasks ask an LLM judge (the verifier) about each graph relation."""
    from conceptcomb.cggc.tasks import all_specs, verified_specs

    return task in {spec.name for spec in verified_specs()} - {s.name for s in all_specs()}


# Title, paper, version, tasks and data: the card, eval.yaml beside this file.
BENCHMARK = Benchmark(key="cggc")
