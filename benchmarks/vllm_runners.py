"""Both frameworks' vLLM runners (and their hf runners) on the same items, measured in one run:
the wall time of each command (vLLM's start-up included) and how far the two frameworks'
replies drift apart, per precision.

For each configuration of ``--configs`` (``runner:dtype[:invariant]``; ``invariant`` sets
``VLLM_BATCH_INVARIANT=1``, vLLM's batch-invariant mode) it runs ``lm_eval`` and ``inspect
eval`` on the first ``--limit`` items of ``--tasks`` on the packaged SmolLM2, greedy, one at a
time (vLLM: eager, a 1 GiB KV cache, lm-eval's ``--batch_size auto``, Inspect's default
connections; hf: batches of 8 in both), and prints per configuration the seconds of each
command, the items whose prompts and whose replies are identical in the two frameworks, and
each framework's headline metric; then, per framework, how many replies each configuration
shares with the first.

    python benchmarks/vllm_runners.py --vllm .vllm-venv/bin/python [--tasks cggc_ood]
        [--limit 8] [--configs vllm:float32,vllm:bfloat16,vllm:bfloat16:invariant,hf:float32]

vLLM runs in its own environment (``--vllm``: scripts/install_vllm_cpu.sh makes one on a
CPU machine); the hf runs use this Python's lm_eval and inspect.

``--batch-check`` measures instead whether a reply depends on the batch it is computed in,
the cause of the frameworks' drift: for each configuration (``vllm:dtype[:invariant]``) it
starts a vLLM server (eager) and asks ``--limit`` CGGC prompts (the packaged data's first
test items, as chats) once one at a time and once all together, greedy, 20 tokens, and
prints how many replies differ between the two.

    python benchmarks/vllm_runners.py --vllm .vllm-venv/bin/python --batch-check --limit 16
        --configs vllm:float32,vllm:bfloat16,vllm:bfloat16:invariant
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conceptcomb.common.results_reader import read_inspect, read_lm_eval
from conceptcomb.smollm2 import hf_folder
from conceptcomb.testing.sent_replies import Items, inspect_items, lm_eval_items
from conceptcomb.testing.vllm_server import cpu_environment


def commands(runner: str, dtype: str, folder: Path, args: argparse.Namespace, out: Path):
    """The lm_eval and inspect commands of one configuration, and the folder of their tools."""
    tasks = args.tasks.split(",")
    bin_dir = Path(args.vllm).parent if runner == "vllm" else Path(sys.executable).parent
    if runner == "vllm":
        engine = {"dtype": dtype, "max_model_len": "2048", "enforce_eager": "True"}
        lm_model = [
            "--model",
            "vllm",
            "--model_args",
            f"pretrained={folder}," + ",".join(f"{k}={v}" for k, v in engine.items()),
        ]
        inspect_model = [
            "--model",
            f"vllm/{folder}",
            "-M",
            "host=127.0.0.1",
            *[a for k, v in engine.items() for a in ("-M", f"{k}={v}")],
        ]
    else:
        lm_model = ["--model", "hf", "--model_args", f"pretrained={folder},dtype={dtype}"]
        inspect_model = ["--model", "hf/local", "-M", f"model_path={folder}",
                         "-M", "do_sample=false", "-M", f"dtype={dtype}",
                         "--max-connections", "8"]  # fmt: skip
    # vLLM batches what it is given; hf's "auto" probes batch sizes up to what the memory holds
    # (on a shared CPU machine it exited during the probe): 8, Inspect's hf batch alike.
    batch = "auto" if runner == "vllm" else "8"
    lm_eval = [str(bin_dir / "lm_eval"), *lm_model, "--batch_size", batch, "--tasks",
               ",".join(tasks), "--limit", str(args.limit), "--apply_chat_template",
               "--log_samples", "--output_path", str(out / "lm_eval")]  # fmt: skip
    if runner != "vllm":  # this Python's lm-eval (an editable install: our tasks' folder)
        from conceptcomb.cli import include_path_args

        lm_eval += include_path_args()
    inspect = [str(bin_dir / "inspect"), "eval", *[f"conceptcomb/{t}" for t in tasks],
               *inspect_model, "--temperature", "0", "--limit", str(args.limit),
               "--log-dir", str(out / "inspect"), "--display", "none"]  # fmt: skip
    return lm_eval, inspect


def timed(command: list[str], env: dict[str, str], log: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600)
    seconds = time.perf_counter() - start
    log.write_text(" ".join(command) + "\n\n" + done.stdout + done.stderr, encoding="utf-8")
    if done.returncode != 0:
        raise SystemExit(f"failed (exit {done.returncode}), log {log}:\n{done.stderr[-3000:]}")
    return seconds


def headline(out: Path, task: str) -> tuple[float | None, float | None]:
    """The first metric lm-eval reports for ``task``, in both frameworks' results."""
    (results,) = (out / "lm_eval").rglob("results_*.json")
    ours = read_lm_eval(results).tasks[task].metrics
    name = next(iter(ours))
    theirs = {}
    for log in (out / "inspect").glob("*.eval"):
        theirs.update(read_inspect(log).tasks)
    return ours[name].value, theirs[task].metrics[name].value if task in theirs else None


def same(a: Items, b: Items, field: str) -> tuple[int, int]:
    keys = [(t, k) for t in a for k in a[t] if k in b.get(t, {})]
    return sum(a[t][k][field] == b[t][k][field] for t, k in keys), len(keys)


def chat_prompts(count: int) -> list[list[dict[str, str]]]:
    """The chats CGGC's out-of-distribution task sends for its first ``count`` test items."""
    from conceptcomb.cggc.docs import chat_messages
    from conceptcomb.cggc.lm_eval_hooks import load_dataset

    docs = load_dataset("cggc_ood")["test"].select(range(count))
    return [[{"role": role, "content": text} for role, text in chat_messages("cggc_ood", doc)]
            for doc in docs]  # fmt: skip


def ask_all(url: str, chats: list[list[dict[str, str]]], together: bool) -> list[str]:
    """Greedy replies of 20 tokens: one request at a time, or all in flight at once."""
    import asyncio

    import aiohttp

    async def one(session: aiohttp.ClientSession, messages: list[dict[str, str]]) -> str:
        body = {"model": "smollm2", "messages": messages, "temperature": 0.0, "max_tokens": 20}
        async with session.post(f"{url}/chat/completions", json=body) as answer:
            reply = await answer.json()
        if "choices" not in reply:  # the server's error, as it said it
            raise RuntimeError(f"HTTP {answer.status}: {json.dumps(reply)[:1000]}")
        return reply["choices"][0]["message"]["content"]

    async def go() -> list[str]:
        timeout = aiohttp.ClientTimeout(total=900)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            if together:
                return list(await asyncio.gather(*(one(session, chat) for chat in chats)))
            return [await one(session, chat) for chat in chats]

    return asyncio.run(go())


def batch_check(args: argparse.Namespace) -> None:
    from conceptcomb.testing.vllm_server import VllmServer

    chats = chat_prompts(args.limit)
    print(f"load average (1 min) at start: {os.getloadavg()[0]:.2f}; {len(chats)} CGGC chats")
    for config in args.configs.split(","):
        _, dtype, *flags = config.split(":")
        env = cpu_environment()
        if "invariant" in flags:
            env["VLLM_BATCH_INVARIANT"] = "1"
        server = VllmServer(args.vllm, hf_folder(), dtype=dtype, extra=("--enforce-eager",),
                            env=env)  # fmt: skip
        with server:
            try:
                alone = ask_all(server.base_url, chats, together=False)
                together = ask_all(server.base_url, chats, together=True)
            except RuntimeError as err:
                errors = [line for line in server.log_tail(10**6).splitlines()
                          if "Error" in line and "async_llm.py" not in line]  # fmt: skip
                print(f"{config}: FAILED: {err}\n  the server's errors: " + " | ".join(errors))
                continue
        differ = sum(a != b for a, b in zip(alone, together, strict=True))
        print(f"{config}: up in {server.startup_seconds:.0f} s; replies that differ between "
              f"one at a time and all together: {differ} of {len(chats)}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vllm", default=".vllm-venv/bin/python", help="a vLLM env's python")
    parser.add_argument("--tasks", default="cggc_ood")
    parser.add_argument("--limit", type=int, default=8)
    parser.add_argument("--configs", default="vllm:float32,vllm:bfloat16,vllm:bfloat16:invariant")
    parser.add_argument("--batch-check", action="store_true", help="see the docstring")
    args = parser.parse_args()
    if args.batch_check:
        batch_check(args)
        return
    from transformers import AutoTokenizer

    folder = hf_folder()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    work = Path(tempfile.mkdtemp(prefix="vllm-runners-"))
    print(f"load average (1 min) at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; "
          f"{args.tasks}, {args.limit} items; outputs in {work}")  # fmt: skip
    found: dict[str, dict[str, Items]] = {}
    for config in args.configs.split(","):
        runner, dtype, *flags = config.split(":")
        env = cpu_environment()
        env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1")
        if "invariant" in flags:
            env["VLLM_BATCH_INVARIANT"] = "1"
        out = work / config.replace(":", "-")
        lm_eval, inspect = commands(runner, dtype, folder, args, out)
        # Inspect's vllm/ provider starts `vllm serve`: the vLLM environment's, on PATH.
        env["PATH"] = f"{Path(lm_eval[0]).parent}{os.pathsep}{os.environ['PATH']}"
        seconds = [timed(lm_eval, env, out.with_suffix(".lm_eval.log")),
                   timed(inspect, env, out.with_suffix(".inspect.log"))]  # fmt: skip
        found[config] = {
            "lm_eval": lm_eval_items(out / "lm_eval"),
            "inspect": inspect_items(out / "inspect", tokenizer),
        }
        prompts = same(found[config]["lm_eval"], found[config]["inspect"], "prompt")
        replies = same(found[config]["lm_eval"], found[config]["inspect"], "reply")
        metrics = [headline(out, task) for task in args.tasks.split(",")]
        shown = "; ".join(
            f"{t} {a} / {b}" for t, (a, b) in zip(args.tasks.split(","), metrics, strict=True)
        )
        print(f"{config}: lm_eval {seconds[0]:.0f} s, inspect {seconds[1]:.0f} s; same prompts "
              f"{prompts[0]}/{prompts[1]}, same replies {replies[0]}/{replies[1]}; headline "
              f"metric lm-eval / Inspect: {shown}")  # fmt: skip
    first = next(iter(found))
    for config in list(found)[1:]:
        shares = [f"{fw} {'/'.join(map(str, same(found[first][fw], found[config][fw], 'reply')))}"
                  for fw in ("lm_eval", "inspect")]  # fmt: skip
        print(f"replies of {config} equal to {first}'s: {', '.join(shares)}")


if __name__ == "__main__":
    main()
