"""An instrumented chat client with upstream's layers, through the public API only.

The model is a ``BaseChatClient`` whose streaming response yields ``"r3:head"``, waits for the run's I/O gate, then
yields ``"r3:done"``, reporting to the ``Probe`` while it runs. Two clients put upstream's layers around it as a
provider's client does, telemetry on (as by default): chat middleware and telemetry with a tokenizer, and function
invocation, chat middleware and telemetry with a compaction strategy. With either option the base client builds its
streaming response with ``ResponseStream.from_awaitable()``, so the telemetry layer wraps a lazily opened stream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from agent_framework import (
    BaseChatClient,
    CharacterEstimatorTokenizer,
    ChatMiddlewareLayer,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FunctionInvocationLayer,
    Message,
    ResponseStream,
    SlidingWindowStrategy,
)
from agent_framework.observability import ChatTelemetryLayer

from scripts.explore.invariants import Probe, run_of


class _Model(BaseChatClient[Any]):
    """The model: a two-update streaming response per call, tagged with the run the last message names."""

    def __init__(self, *, probe: Probe, **options: Any) -> None:
        super().__init__(**options)
        self.probe = probe

    def _inner_get_response(  # pyright: ignore[reportIncompatibleMethodOverride]
        self, *, messages: Sequence[Message], stream: bool, options: Any, **kwargs: Any
    ) -> ResponseStream[ChatResponseUpdate, ChatResponse[Any]]:
        run = run_of(messages[-1].text)

        async def updates() -> AsyncIterator[ChatResponseUpdate]:
            with self.probe.invoked(run, "model"):
                yield ChatResponseUpdate(role="assistant", contents=[Content.from_text(f"{run}:head")])
                await self.probe.gate(run).wait()
                yield ChatResponseUpdate(role="assistant", contents=[Content.from_text(f"{run}:done")])

        return ResponseStream(updates(), finalizer=ChatResponse[Any].from_updates)


class TelemetryClient(ChatMiddlewareLayer[Any], ChatTelemetryLayer[Any], _Model):
    """Chat middleware and telemetry around the model; built with a tokenizer."""


class FunctionClient(FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], ChatTelemetryLayer[Any], _Model):
    """Function invocation, chat middleware and telemetry around the model; built with a compaction strategy."""


def chat_clients(probe: Probe) -> tuple[TelemetryClient, FunctionClient]:
    """The two layered clients, reporting to ``probe``."""
    return (
        TelemetryClient(probe=probe, tokenizer=CharacterEstimatorTokenizer()),
        FunctionClient(probe=probe, compaction_strategy=SlidingWindowStrategy(keep_last_groups=1)),
    )


def ask(client: TelemetryClient | FunctionClient, turn: str) -> ResponseStream[Any, Any]:
    """A streaming response of ``client`` to one user message, ``turn``."""
    return client.get_response([Message(role="user", contents=[turn])], stream=True)
