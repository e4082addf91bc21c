"""The ``anthropic`` backend (optional extra ``silicolab[anthropic]``): the Messages API.

System messages are lifted into the ``system`` parameter, as the API requires. A JSON
schema is requested by instruction by default (``json_mode="prompt"``, which every model
follows and :func:`silicolab.llm.structured` validates and repairs); ``json_mode=
"output_config"`` asks for the API's enforced structured output instead, for models that
support it. ``temperature`` is sent in the request body (recent SDKs dropped the argument;
models that reject it answer with a clear HTTP 400).
"""

from __future__ import annotations

import json
import time
from typing import Any

from silicolab.core.errors import ConfigError, LLMError
from silicolab.llm.backends.openai_backend import public_url, schema_instruction
from silicolab.llm.base import LanguageModel, PerLoop, close_client, scrub_completion
from silicolab.llm.retry import TransientLLMError, parse_retry_after
from silicolab.llm.types import Completion, Request, Usage

DEFAULT_MAX_TOKENS = 1024


class AnthropicModel(LanguageModel):
    """Claude models through the official ``anthropic`` SDK (imported on first use)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        json_mode: str = "prompt",
    ):
        if json_mode not in ("prompt", "output_config"):
            raise ConfigError(f"json_mode={json_mode!r}: use 'prompt' or 'output_config'")
        try:
            import anthropic  # noqa: F401
        except ImportError as err:
            raise ConfigError(
                "the 'anthropic' backend needs the anthropic SDK: "
                "pip install 'silicolab[anthropic]'"
            ) from err
        self.spec = f"anthropic:{model}"
        self.model = model
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.default_max_tokens = default_max_tokens
        self.json_mode = json_mode
        self._api_key = api_key
        self._clients: PerLoop[Any] = PerLoop(self._make_client)

    def identity(self) -> dict[str, Any]:
        return {"backend": "anthropic", "model": self.model, "base_url": public_url(self.base_url)}

    def __repr__(self) -> str:
        return f"AnthropicModel(model={self.model!r}, base_url={public_url(self.base_url)!r})"

    def _make_client(self) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(
            api_key=self._api_key, base_url=self.base_url, max_retries=0, timeout=self.timeout_s
        )

    def _payload(self, request: Request) -> dict[str, Any]:
        system = [m["content"] for m in request.messages if m["role"] == "system"]
        extra: dict[str, Any] = {}
        if request.json_schema is not None and self.json_mode == "prompt":
            system.append(schema_instruction(dict(request.json_schema)))
        elif request.json_schema is not None:
            extra["output_config"] = {
                "format": {"type": "json_schema", "schema": dict(request.json_schema)}
            }
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in request.messages if m["role"] != "system"],
            "max_tokens": request.max_tokens or self.default_max_tokens,
        }
        if system:
            body["system"] = "\n\n".join(system)
        if request.temperature is not None:
            extra["temperature"] = min(request.temperature, 1.0)  # the API's range is [0, 1]
        if request.top_p is not None:
            extra["top_p"] = request.top_p
        if request.stop:
            body["stop_sequences"] = list(request.stop)
        if extra:
            body["extra_body"] = extra
        return body

    async def acomplete(self, request: Request) -> Completion:
        import anthropic

        start = time.perf_counter()
        try:
            response = await self._clients.get().messages.create(**self._payload(request))
        except anthropic.APITimeoutError as err:
            raise TransientLLMError(f"timed out after {self.timeout_s}s", timed_out=True) from err
        except anthropic.APIConnectionError as err:
            raise TransientLLMError(f"connection error: {err}") from err
        except anthropic.APIStatusError as err:
            status = err.status_code
            if status in (408, 429, 529) or status >= 500:
                retry_after = parse_retry_after(err.response.headers.get("retry-after"))
                raise TransientLLMError(
                    f"HTTP {status}", status=status, retry_after=retry_after
                ) from err
            raise LLMError(f"HTTP {status}: {str(err)[:300]}", status=status) from err
        except (json.JSONDecodeError, anthropic.APIResponseValidationError) as err:
            raise TransientLLMError(f"malformed response body: {type(err).__name__}") from err
        try:
            text = "".join(
                block.text for block in response.content if getattr(block, "type", "") == "text"
            )
            usage = Usage(int(response.usage.input_tokens), int(response.usage.output_tokens))
        except (AttributeError, TypeError) as err:
            raise TransientLLMError("malformed response body: no content/usage") from err
        return scrub_completion(
            Completion(
                text=text,
                usage=usage,
                model=getattr(response, "model", None) or self.model,
                latency_s=time.perf_counter() - start,
                finish_reason=getattr(response, "stop_reason", None),
            ),
            self._api_key,
        )

    async def aclose(self) -> None:
        await close_client(self._clients.take())
