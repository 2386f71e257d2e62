"""The judge a run asks, from its settings: `build_judge`.

Judges rate how much a concept has a property, on the paper's 1-10 scale: the API judge
(`conceptcomb.scorers.api_judge.OpenAIJudge`) or the offline one
(`conceptcomb.scorers.local_judge.LocalJudge`), both behind the interface of
`conceptcomb.scorers.judge_base`, re-exported here for the modules that name it from here.
"""

from __future__ import annotations

from collections.abc import Callable

from conceptcomb.common.errors import ConfigError
from conceptcomb.scorers.api_judge import OpenAIJudge
from conceptcomb.scorers.judge_base import Judge, JudgeReply, record_relevance, shorten
from conceptcomb.scorers.judge_settings import JudgeSettings
from conceptcomb.scorers.local_judge import LocalJudge

__all__ = ["Judge", "JudgeReply", "build_judge", "record_relevance", "shorten"]


_JUDGES: dict[str, Callable[[JudgeSettings], Judge]] = {"openai": OpenAIJudge, "local": LocalJudge}


def build_judge(settings: JudgeSettings) -> Judge:
    if settings.judge not in _JUDGES:
        raise ConfigError("The judge is off (judge=off): nothing can be rated.")
    return _JUDGES[settings.judge](settings)
