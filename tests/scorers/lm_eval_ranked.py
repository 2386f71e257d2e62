"""lm-eval's command line with one more model, ``ranked-chat-completions``: lm-eval's
``local-chat-completions`` runner whose requests are split across the processes that
``accelerate launch`` starts, as lm-eval's ``hf`` runner splits them over several GPUs (on
CPU the hf runner splits nothing: it needs more than one GPU). lm-eval's evaluator does the
rest as in a GPU run: each rank builds the requests of its docs, runs the filters on them,
and the metrics are gathered to rank 0. For tests/scorers/test_data_parallel_lm_eval.py.

    ACCELERATE_USE_CPU=true accelerate launch --multi_gpu --num_processes 2 \\
        tests/scorers/lm_eval_ranked.py --model ranked-chat-completions --model_args ... --tasks ...
"""

from __future__ import annotations

from typing import Any

from accelerate import Accelerator
from lm_eval.api.registry import register_model
from lm_eval.models.openai_completions import LocalChatCompletion


@register_model("ranked-chat-completions")
class RankedChatCompletions(LocalChatCompletion):
    """Rank, world size and the evaluator's collectives from accelerate, as HFLM has them."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.accelerator = Accelerator()
        self._rank = self.accelerator.process_index
        self._world_size = self.accelerator.num_processes
        self._device = self.accelerator.device

    def all_gather(self, tensor: Any) -> Any:
        return self.accelerator.gather(tensor) if self.world_size > 1 else tensor

    def gather_object(self, obj: Any, dst: int = 0) -> Any:
        import torch.distributed as dist

        if self.world_size <= 1:
            return [obj]
        result = [None] * self.world_size if self.rank == dst else None
        dist.gather_object(obj=obj, object_gather_list=result, dst=dst)
        return result

    def barrier(self) -> None:
        if self.world_size > 1:
            self.accelerator.wait_for_everyone()

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        print(f"rank {self.rank} of {self.world_size}: {len(requests)} requests", flush=True)
        return super().generate_until(requests, disable_tqdm=disable_tqdm)


if __name__ == "__main__":
    import torch.distributed as dist
    from lm_eval.__main__ import cli_evaluate

    try:
        cli_evaluate()
    finally:
        # A process group still alive at exit may abort it ("terminate called without an
        # active exception", SIGABRT) after all the work is done: CI saw it once on rank 1.
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()
