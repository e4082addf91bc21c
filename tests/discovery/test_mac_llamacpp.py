"""MAC meta-debate through a real llama.cpp server (random-weight tiny model).

Why: the scripted and fake-HTTP tests cannot show that the debate's prompts fit a real
server's context, that its judge schemas compile to llama.cpp grammars (``json_object``
mode) and that a real model's replies flow through the rounds, the forced verdict and the
ledger. The model's weights are random, so its verdicts are arbitrary: the test checks
plumbing (a graph over the right nodes, real token usage per role), never the edges.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
from tests.support.llamacpp import LlamaCppServer, llamacpp_available
from tests.support.tiny_gguf import build_tiny_gguf

from silicolab.discovery.mac import ameta_debate
from silicolab.llm import load_model
from silicolab.scm import CausalGraph, PartialGraph

pytestmark = [
    pytest.mark.llamacpp,
    pytest.mark.skipif(
        not llamacpp_available(),
        reason="llama-cpp-python and gguf are not installed (pip install 'silicolab[local]')",
    ),
]

#: The near-character-level vocabulary makes a debate prompt a few thousand tokens.
N_CTX = 8192
KEY_ENV = "SILICOLAB_LLAMACPP_KEY"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaCppServer]:
    model_path = build_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf", seed=0)
    with LlamaCppServer(model_path, n_ctx=N_CTX) as srv:
        yield srv


async def test_meta_debate_runs_end_to_end_on_llamacpp(server, monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-dummy-llamacpp")
    rng = np.random.default_rng(0)
    rain = rng.normal(size=60)
    data = pd.DataFrame({"rain": rain, "wet": rain + rng.normal(size=60), "sun": -rain})
    model = load_model(
        "openai:tiny", base_url=server.base_url, api_key_env=KEY_ENV, json_mode="json_object"
    )
    try:
        result = await ameta_debate(
            data,
            model=model,
            description="Daily weather at one station.",
            max_rounds=1,
            debater_max_tokens=48,
            seed=1,
        )
    finally:
        await model.aclose()
    assert isinstance(result.graph, CausalGraph | PartialGraph)
    assert list(result.graph.nodes) == ["rain", "wet", "sun"]
    assert result.params["n_debates"] == 3 and result.params["n_questions"] == 6
    usage = result.usage
    assert usage["total"]["input_tokens"] > 0 and usage["total"]["output_tokens"] > 0
    for role in ("affirmative", "negative", "judge"):
        assert usage["by_role"][role]["output_tokens"] > 0
    assert usage["by_role"]["affirmative"]["calls"] == 3
    for debate in result.raw["debates"]:
        assert len(debate["rounds"]) == 1  # max_rounds respected
        (round_1,) = debate["rounds"]
        # a random-weight model often puts raw control characters into the judge's free
        # strings: the invalid reply is recorded and the enum-only forced call decides
        assert "judge" in round_1 or round_1["judge_error"]["raw"]
        decided_in_round = {
            int(k[1:]) for k, v in round_1.get("judge", {}).items() if v["decision"] != "follow_up"
        }
        if decided_in_round != {1, 2}:
            assert set(debate["final"]["forced"]) == {1, 2} - decided_in_round
        verdicts = set(debate["verdicts"].values())
        assert verdicts <= {"yes", "no", "undecided"}
    assert server.request_count() >= 9
