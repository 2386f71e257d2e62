"""What lm-eval and Inspect sent a model and got back, item by item, from their own outputs:
lm-eval's sample logs (``--log_samples``) and Inspect's eval logs. For comparing two runs of
the same tasks in both frameworks (tests/frameworks/test_vllm.py,
benchmarks/vllm_runners.py): the prompt is the text the model read, lm-eval's as it logs it
(``--apply_chat_template``: the chat template applied), Inspect's the same template rendered
over the messages it sent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Items = dict[str, dict[str, dict[str, str]]]  # task -> item id -> {"prompt", "reply"}


def lm_eval_items(out: Path) -> Items:
    """task -> item id -> the prompt lm-eval sent (chat template applied) and the reply."""
    found: Items = {}
    for path in out.rglob("samples_*.jsonl"):
        task = path.name.removeprefix("samples_").rsplit("_", 1)[0]
        for line in path.read_text(encoding="utf-8").splitlines():
            sample = json.loads(line)
            key = str(sample["doc"].get("item_id") or sample["doc"]["concept"])
            found.setdefault(task, {})[key] = {
                "prompt": sample["arguments"]["gen_args_0"]["arg_0"],
                "reply": sample["resps"][0][0],
            }
    return found


def inspect_items(out: Path, tokenizer: Any) -> Items:
    """task -> item id -> the chat template over the messages Inspect sent, and the reply."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    found: Items = {}
    for info in list_eval_logs(str(out)):
        log = read_eval_log(info)
        if log.status != "success":
            raise RuntimeError(f"{info.name}: the Inspect run did not succeed: {log.error}")
        task = log.eval.task.split("/")[-1]
        for sample in log.samples or []:
            # The conversation up to the reply: the solvers' demonstrations included.
            sent = sample.messages[:-1] if sample.messages[-1].role == "assistant" else []
            messages = [{"role": m.role, "content": m.text} for m in sent]
            prompt = tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
            found.setdefault(task, {})[str(sample.id)] = {
                "prompt": prompt,
                "reply": sample.output.completion,
            }
    return found
