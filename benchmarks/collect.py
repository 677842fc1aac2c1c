"""What collecting the traffic costs the requests: the same endpoint with and without it.

    python benchmarks/collect.py --requests 300 --concurrency 1 --rounds 3

Starts two local endpoints on free loopback ports serving the same QA model (the packaged MiniLM
with a seeded QA head, as benchmarks/serve.py builds it): one collects every request masked
(`serving/collect.py` with `screening.outputs.traffic_masker`, as `tunegate endpoint serve`
does), the other collects nothing. Both are warmed up (the collecting one until its masker has
loaded and written a record), then sent the same support-ticket questions over HTTP, `--rounds`
times in alternating order (ABBA...), by `--concurrency` clients in a closed loop (the load
generator of benchmarks/serve.py). Prints each side's requests/s and client-side p50/p95, the
records written, and how long the writer took to drain after the last answer. Never run in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")

from serve import _load, _payloads, _pooled  # benchmarks/serve.py's load generator

from cli.endpoint import MASKER
from serving.client import serve_in_thread
from serving.collect import COLLECTED, read_records
from serving.settings import ServerSettings
from trainer.args import PACKAGED_MODEL
from trainer.modeling import load_base, load_tokenizer, write_model_info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="timed requests per round")
    parser.add_argument("--concurrency", type=int, default=1, help="concurrent clients")
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of each side")
    args = parser.parse_args()
    payloads = _payloads(args.requests)
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
        tmp = Path(folder)
        model_dir = tmp / "qa-model"
        load_base("extractive-qa", PACKAGED_MODEL, 42).save_pretrained(model_dir)
        load_tokenizer(PACKAGED_MODEL).save_pretrained(model_dir)
        write_model_info(model_dir, "extractive-qa", PACKAGED_MODEL, adapter=False)
        endpoints = {}
        for side, masker in (("collecting", MASKER), ("not collecting", None)):
            state = tmp / side.replace(" ", "-")
            settings = ServerSettings(key_file=state / "key", state_dir=state)
            endpoint = stack.enter_context(serve_in_thread(settings, masker=masker))
            with endpoint.client() as admin:
                admin.put_deployment("blue", str(model_dir), version="qa:1")
                admin.set_traffic({"blue": 100})
            endpoints[side] = (endpoint, state / COLLECTED)
        for endpoint, _ in endpoints.values():  # warm up: the model, and the masker loaded
            asyncio.run(_load(endpoint, "blue", payloads[:20], args.concurrency, 60))
        collected = endpoints["collecting"][1]
        while not any(True for _ in read_records(collected)):
            time.sleep(0.2)
        runs: dict[str, list] = {side: [] for side in endpoints}
        for r in range(args.rounds):  # ABBA...: a change of background load hits both alike
            for side in list(endpoints)[:: 1 if r % 2 == 0 else -1]:
                endpoint, _ = endpoints[side]
                result = _load(endpoint, "blue", payloads, args.concurrency, 60)
                runs[side].append(asyncio.run(result))
        last_answer = time.perf_counter()
        expected = 20 + args.rounds * args.requests
        while sum(1 for _ in read_records(collected)) < expected:
            if time.perf_counter() - last_answer > 120:
                break
            time.sleep(0.05)
        drained = time.perf_counter() - last_answer
        written = sum(1 for _ in read_records(collected))
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs at the end")
        for side, results in runs.items():
            pooled = _pooled(results)
            print(
                f"{side:>15}: {pooled.rate:6.1f} req/s  p50 {pooled.p(50):6.1f} ms  "
                f"p95 {pooled.p(95):6.1f} ms  ({len(pooled.latencies_ms)} requests)"
            )
        print(f"records written {written} of {expected}; writer drained {drained:.1f}s after")


if __name__ == "__main__":
    main()
