"""The ``openai`` backend: any OpenAI-compatible chat-completions server.

One client covers OpenAI, vLLM, Ollama (``/v1``), llama.cpp's server, LM Studio,
OpenRouter, Together and Groq: only ``base_url`` and the key differ. Retrying is never the
client's job: :mod:`silicolab.llm.retry` owns it so that every attempt is bounded, logged
and counted.

Two transports carry the POST (``transport=``):

``"native"`` -- :mod:`silicolab.llm.http`, a lean HTTP/1.1 client: ~0.05 ms of CPU per call
    against ~0.9 ms through the SDK and httpx, which decides throughput at high concurrency
    on small machines (``benchmarks/bench_llm.py``).
``"sdk"`` -- the official ``openai`` SDK's generic ``post`` (its own retries off), which also
    handles proxies.
``"auto"`` (default) -- native, unless the environment configures a proxy for the server.

Both send the same JSON body to ``{base_url}/chat/completions`` and share the error mapping
below, so the choice changes speed, not behaviour.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from silicolab import __version__
from silicolab.core.errors import ConfigError, LLMError
from silicolab.core.secrets import scrub_text
from silicolab.llm.base import LanguageModel, PerLoop, close_client, scrub_completion
from silicolab.llm.http import HTTPClient, TransportError, proxy_for
from silicolab.llm.retry import TransientLLMError, parse_retry_after
from silicolab.llm.types import Completion, Request, Usage, estimate_tokens

log = logging.getLogger("silicolab.llm")

#: How a JSON schema is requested: OpenAI's ``json_schema`` response format, the
#: ``json_object`` + ``schema`` form some servers use, or only an instruction in the prompt.
JSON_MODES = ("json_schema", "json_object", "prompt")
#: How requests travel (see the module docstring).
TRANSPORTS = ("auto", "native", "sdk")
#: Servers (public URLs) that refused ``json_schema`` in this process: later models
#: talking to them start in the ``json_object`` form instead of repeating the failed call.
_JSON_OBJECT_SERVERS: set[str | None] = set()
#: The SDK's default server when neither ``base_url`` nor ``OPENAI_BASE_URL`` is set.
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def public_url(url: str | None) -> str | None:
    """``url`` without user info, query or fragment (which may carry credentials)."""
    if not url:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def schema_instruction(schema: dict[str, Any]) -> str:
    """The prompt text that asks for JSON of ``schema`` (for servers without constraints)."""
    return (
        "Reply with a single JSON object that conforms to this JSON schema, and nothing "
        f"else:\n{json.dumps(schema)}"
    )


def _schema_name(schema: dict[str, Any]) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title", "response")))
    return name[:64] or "response"


class OpenAIChatModel(LanguageModel):
    """Chat completions from an OpenAI-compatible server (see the module docstring)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        json_mode: str = "json_schema",
        max_tokens_param: str = "max_tokens",
        extra_body: dict[str, Any] | None = None,
        transport: str = "auto",
        spec: str | None = None,
        identity: dict[str, Any] | None = None,
        default_max_tokens: int | None = None,
    ):
        if json_mode not in JSON_MODES:
            raise LLMError(f"json_mode={json_mode!r}: use one of {', '.join(JSON_MODES)}")
        if transport not in TRANSPORTS:
            raise ConfigError(f"transport={transport!r}: use one of {', '.join(TRANSPORTS)}")
        self.spec = spec or f"openai:{model}"
        self.default_max_tokens = default_max_tokens  # for calls that set no max_tokens
        self._identity = identity
        self.model = model
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.json_mode = json_mode
        self.max_tokens_param = max_tokens_param
        self.extra_body = dict(extra_body or {})
        self._api_key = api_key
        self._clients: PerLoop[Any] = PerLoop(self._make_client)
        url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        if transport == "auto":
            transport = "sdk" if proxy_for(url) else "native"
        self.transport = transport
        self._url = url
        if json_mode == "json_schema" and public_url(url) in _JSON_OBJECT_SERVERS:
            self.json_mode = "json_object"  # this server refused json_schema before
        self._http: PerLoop[HTTPClient] = PerLoop(self._make_http)
        if transport == "native":
            self._make_http()  # a malformed base_url fails here, not at the first call

    def identity(self) -> dict[str, Any]:
        if self._identity is not None:
            return dict(self._identity)
        return {
            "backend": "openai",
            "model": self.model,
            "base_url": public_url(self.base_url),
            "extra_body": self.extra_body,
        }

    def __repr__(self) -> str:  # never shows the key
        return f"OpenAIChatModel(model={self.model!r}, base_url={public_url(self.base_url)!r})"

    def _make_client(self) -> Any:
        import openai

        return openai.AsyncOpenAI(
            api_key=self._api_key, base_url=self.base_url, max_retries=0, timeout=self.timeout_s
        )

    def _make_http(self) -> HTTPClient:
        # The headers the SDK would send that matter to servers: the key, and OpenAI's
        # optional organisation and project (read from the same variables the SDK reads).
        headers = {"User-Agent": f"silicolab/{__version__}"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        for env, header in (
            ("OPENAI_ORG_ID", "OpenAI-Organization"),
            ("OPENAI_PROJECT_ID", "OpenAI-Project"),
        ):
            if os.environ.get(env):
                headers[header] = os.environ[env]
        return HTTPClient(self._url, headers=headers, timeout_s=self.timeout_s)

    def _payload(self, request: Request) -> dict[str, Any]:
        messages = list(request.messages)
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.top_p is not None:
            body["top_p"] = request.top_p
        max_tokens = request.max_tokens or self.default_max_tokens
        if max_tokens is not None:
            body[self.max_tokens_param] = max_tokens
        if request.seed is not None:
            body["seed"] = request.seed
        elif request.sample_index:
            # the sample's identity as the server's sampling seed: two independent draws
            # of one prompt (two conditions, two replicates) are told apart by the server
            # too, and a server that honours seeds redraws the same sample after the cache
            # is cleared
            body["seed"] = request.sample_index
        if request.stop:
            body["stop"] = list(request.stop)
        schema = request.json_schema
        if schema is not None:
            if self.json_mode == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": _schema_name(dict(schema)), "schema": schema},
                }
            elif self.json_mode == "json_object":
                body["response_format"] = {"type": "json_object", "schema": schema}
            if self.json_mode != "json_schema":
                note = {"role": "system", "content": schema_instruction(dict(schema))}
                body["messages"] = [note, *messages]
        return body

    async def acomplete(self, request: Request) -> Completion:
        body = {**self._payload(request), **self.extra_body}
        start = time.perf_counter()
        if self.transport == "native":
            status, headers, data = await self._post_native(body)
        else:
            status, headers, data = await self._post_sdk(body)
        if status >= 400:
            kind = body.get("response_format", {}).get("type")
            if kind == "json_schema" and _rejects(status, data):
                # Some servers (llama-cpp-python) know only json_object + schema: switch once
                # for the life of this model and resend.
                log.info("%s: server rejects json_schema; using json_object", self.spec)
                self.json_mode = "json_object"
                _JSON_OBJECT_SERVERS.add(public_url(self._url))
                return await self.acomplete(request)
            raise _status_error(status, headers, data, self._api_key)
        if isinstance(data, _Malformed):
            raise TransientLLMError(f"malformed response body: {data.reason}")
        completion = _to_completion(data, request, self.model, time.perf_counter() - start)
        return scrub_completion(completion, self._api_key)

    async def _post_native(self, body: dict[str, Any]) -> tuple[int, Any, Any]:
        try:
            response = await self._http.get().post_json("/chat/completions", body)
        except TimeoutError as err:
            raise TransientLLMError(f"timed out after {self.timeout_s}s", timed_out=True) from err
        except TransportError as err:
            raise TransientLLMError(f"connection error: {err}") from err
        return response.status, response.headers, _decode(response.body)

    async def _post_sdk(self, body: dict[str, Any]) -> tuple[int, Any, Any]:
        import httpx
        import openai

        try:
            # The SDK's generic POST (auth, base_url, proxies) with our own JSON parsing:
            # skips building typed response objects, ~25% less CPU per call.
            response = await self._clients.get().post(
                "/chat/completions", body=body, cast_to=httpx.Response
            )
        except openai.APITimeoutError as err:
            raise TransientLLMError(f"timed out after {self.timeout_s}s", timed_out=True) from err
        except openai.APIConnectionError as err:
            raise TransientLLMError(f"connection error: {err}") from err
        except openai.APIStatusError as err:
            return err.status_code, err.response.headers, _decode(err.response.content)
        return response.status_code, response.headers, _decode(response.content)

    async def aclose(self) -> None:
        await close_client(self._clients.take())
        http = self._http.take()
        if http is not None:
            await http.aclose()


class _Malformed:
    """A response body that is not JSON (kept apart from a body that is)."""

    def __init__(self, reason: str, text: str):
        self.reason, self.text = reason, text


def _decode(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        return _Malformed(type(err).__name__, raw[:300].decode("utf-8", errors="replace"))


def _status_error(status: int, headers: Any, data: Any, secret: str) -> LLMError:
    """The error for an HTTP error status: transient (retried) for 408, 429 and 5xx."""
    message = f"HTTP {status}: {scrub_text(_short(data), [secret])}"
    if status in (408, 429) or status >= 500:
        retry_after = parse_retry_after(headers.get("retry-after"))
        return TransientLLMError(message, status=status, retry_after=retry_after)
    if status in (401, 403):
        return LLMError(
            f"the server refused the API key ({message}); check the key in the environment "
            "variable named by api_key_env",
            status=status,
        )
    if status == 404:
        return LLMError(f"{message}; check the model name and base_url", status=status)
    return LLMError(message, status=status)


def _rejects(status: int, data: Any) -> bool:
    """Whether an error says the server does not accept a ``json_schema`` response format."""
    return status in (400, 422, 500) and "response_format" in _short(data, limit=4000)


def _short(data: Any, limit: int = 300) -> str:
    """The server's error message from an error body (OpenAI's ``{"error": {"message"}}``,
    FastAPI's ``{"detail"}``, or the raw text), cut to ``limit`` characters."""
    if isinstance(data, _Malformed):
        return data.text[:limit]
    if isinstance(data, dict):
        inner = data.get("error", data)
        if isinstance(inner, dict):
            for key in ("message", "detail"):
                if inner.get(key):
                    return str(inner[key])[:limit]
        if isinstance(inner, str):
            return inner[:limit]
    return json.dumps(data)[:limit] if data is not None else ""


def _to_completion(data: Any, request: Request, model: str, latency: float) -> Completion:
    """A :class:`Completion` from a chat-completions JSON body (checked, not trusted)."""
    try:
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError) as err:
        raise TransientLLMError("malformed response body: no choices[0].message") from err
    usage = data.get("usage") or {}
    if isinstance(usage, dict) and usage.get("prompt_tokens") is not None:
        tokens = Usage(int(usage["prompt_tokens"]), int(usage.get("completion_tokens") or 0))
    else:
        prompt = "".join(m["content"] for m in request.messages)
        tokens = Usage(estimate_tokens(prompt), estimate_tokens(text), estimated=True)
    return Completion(
        text=str(text),
        usage=tokens,
        model=data.get("model") or model,
        latency_s=latency,
        finish_reason=choice.get("finish_reason"),
    )
