"""Language models: one small protocol, composed wrappers, many backends.

>>> from silicolab.llm import load_model
>>> model = load_model("scripted", rules={r"capital of France": "Paris"})
>>> model.generate("What is the capital of France?").text
'Paris'
>>> model.ledger.summary()["calls"]
1

The names below are imported on first use (:mod:`silicolab.core.lazy`): a worker whose
units make no call loads none of the backends.
"""

from typing import TYPE_CHECKING

from silicolab.core.lazy import lazy_exports

if TYPE_CHECKING:
    from silicolab.llm.backends.scripted import ScriptedModel, example_from_schema
    from silicolab.llm.base import GenerationOptions, LanguageModel, ModelWrapper, SamplingOptions
    from silicolab.llm.cache import SQLiteCache, cache_key
    from silicolab.llm.factory import PROVIDERS, load_model, parse_spec
    from silicolab.llm.ledger import Ledger, Prices
    from silicolab.llm.retry import TransientLLMError
    from silicolab.llm.roles import describe_roles, model_for_role
    from silicolab.llm.structured import (
        achoose,
        anumber,
        astructured,
        choose,
        extract_json,
        number,
        structured,
    )
    from silicolab.llm.types import Completion, Message, Request, Usage

__all__ = [
    "PROVIDERS",
    "Completion",
    "GenerationOptions",
    "LanguageModel",
    "Ledger",
    "Message",
    "ModelWrapper",
    "Prices",
    "Request",
    "SQLiteCache",
    "SamplingOptions",
    "ScriptedModel",
    "TransientLLMError",
    "Usage",
    "achoose",
    "anumber",
    "astructured",
    "cache_key",
    "choose",
    "describe_roles",
    "example_from_schema",
    "extract_json",
    "load_model",
    "model_for_role",
    "number",
    "parse_spec",
    "structured",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__, __all__)
