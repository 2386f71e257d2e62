"""CGGC (compositional generalization, graph-grounded generative commonsense) as the package
sees it."""

from __future__ import annotations

import os
from typing import Any

from conceptcomb.common.contract import Benchmark, MetricInfo


def tasks() -> dict[str, list[MetricInfo]]:
    from conceptcomb.cggc.metrics import METRICS
    from conceptcomb.cggc.tasks import all_specs, verified_specs
    from conceptcomb.cggc.verification import SUFFIX, VERIFIED_SHARE, VERIFIER_FAILURES

    plain = list(METRICS)
    verified = [
        *plain,
        *(MetricInfo(i.name + SUFFIX, i.higher_is_better, i.aggregation, i.title) for i in plain),
        MetricInfo(VERIFIED_SHARE),
        MetricInfo(VERIFIER_FAILURES, False, "sum"),
    ]
    found = {"cggc": plain}  # the Inspect task of that name (lm-eval: the group)
    found.update({spec.name: plain for spec in all_specs()})
    found.update({spec.name: verified for spec in verified_specs()})
    return found


def datasets() -> dict[str, Any]:
    from conceptcomb.cggc.sources import CN100K_DATASET, COMMONGEN_DATASET

    # What CGGC is built from (`conceptcomb cggc build` fetches them when not named); the
    # canonical build ships inside the package.
    return {"cggc-commongen": COMMONGEN_DATASET, "cggc-conceptnet": CN100K_DATASET}


def local_data_records(data_dir: str | None) -> list[dict[str, Any]]:
    """The user's own CGGC build (`conceptcomb cggc build`), if one is found: its sha256."""
    from conceptcomb.cggc.data import POOL_FILE, TEST_FILE, _find_file, dataset_dir
    from conceptcomb.common.datafiles import sha256_of
    from conceptcomb.common.errors import ConceptcombError

    try:
        folder = dataset_dir(data_dir or os.environ.get("CONCEPTCOMB_DATA_DIR"))
    except ConceptcombError:
        return []
    files = {}
    for stem in (POOL_FILE, TEST_FILE):
        path = _find_file(folder, stem)
        if path is not None:
            files[path.name] = {"sha256": sha256_of(path), "checked_locally": True}
    return [{"kind": "built", "key": "cggc", "title": "CGGC built by the user", "files": files}]


BENCHMARK = Benchmark(
    key="cggc",
    title="CGGC: compositional generalization in graph-grounded generative commonsense",
    paper="Fu and Frank (Findings of EMNLP 2024)",
)
