"""One process of a two-process torch.distributed (gloo) run that judges inside an lm-eval
judge filter's `shared_questions`, as each rank of a data-parallel lm-eval run does; for
tests/scorers/test_ranks.py. Prints one JSON line: what this rank got, or its error.

    python ranks_worker.py RANK WORLD INIT_FILE JUDGE_URL SCENARIO
"""

from __future__ import annotations

import json
import sys

import torch.distributed as dist

from conceptcomb.common.errors import ConfigError
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.judges import build_judge
from conceptcomb.scorers.ranks import shared_questions
from conceptcomb.scorers.rating import rate_prompts
from conceptcomb.scorers.relevance import relevance_prompt

# Per scenario, each rank's questions as (concept, property); None: no question at all.
SCENARIOS = {
    "overlap": [[("ice", "cold"), ("fire", "hot"), ("moth", "small"), ("ice", "cold")],
                [("moth", "small"), ("boat", "wet")]],
    "one rank has none": [[("ice", "cold"), ("fire", "hot")], None],
    "a rank fails before asking": [[("ice", "cold")], "fail before"],
    "a rank fails while asking": [[("ice", "cold"), ("fire", "hot")], [("boat", "wet")]],
}  # fmt: skip


def main() -> None:
    rank, world, init_file, url, scenario = sys.argv[1:]
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=int(rank),
                            world_size=int(world))  # fmt: skip
    settings = JudgeSettings.resolve({"judge_base_url": url, "judge_cache": "off"})
    mine = SCENARIOS[scenario][int(rank)]
    build = build_judge
    if scenario == "a rank fails while asking" and rank == "1":

        def build(options: JudgeSettings):  # its judge cannot even be built
            raise ConfigError("this rank's judge is broken")

    try:
        with shared_questions():
            if mine == "fail before":
                raise ValueError("parsing the replies failed")
            if mine is None:
                result = {"asked": 0}
            else:
                prompts = [relevance_prompt(concept, prop) for concept, prop in mine]
                replies, usage, _ = rate_prompts(settings, prompts, build=build)
                ratings = {
                    p.split("Concept: ")[-1].split("\n")[0]: r.rating for p, r in replies.items()
                }
                result = {"ratings": ratings, "usage": usage.summary()}
    except Exception as err:
        result = {"error": f"{type(err).__name__}: {err}"}
    print(json.dumps(result), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
