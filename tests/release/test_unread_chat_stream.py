"""Closing a chat client's streaming response before its first token (a request cancelled early) exits cleanly,
with telemetry on and the response built from an awaitable (a tokenizer or a compaction strategy configured)."""

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import pytest
from agent_framework import (
    Agent,
    BaseChatClient,
    CharacterEstimatorTokenizer,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    Message,
    ResponseStream,
)
from agent_framework.observability import ChatTelemetryLayer


class FakeClient(ChatTelemetryLayer[Any], BaseChatClient[Any]):
    """Streams one update per call; counts the calls that reached the model."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model_calls = 0

    def _inner_get_response(
        self, *, messages: Sequence[Message], stream: bool, options: Mapping[str, Any], **kwargs: Any
    ) -> Any:
        self.model_calls += 1

        async def updates() -> AsyncIterator[ChatResponseUpdate]:
            yield ChatResponseUpdate(role="assistant", contents=[Content.from_text("hi")])

        if stream:
            return ResponseStream(updates(), finalizer=ChatResponse.from_updates)
        raise NotImplementedError


@pytest.mark.parametrize("configured", ["tokenizer", "none"])
async def test_closing_an_unread_chat_stream_exits_cleanly(configured: str) -> None:
    options: dict[str, Any] = {"tokenizer": CharacterEstimatorTokenizer()} if configured == "tokenizer" else {}
    client = FakeClient(**options)
    async with client.get_response([Message("user", ["hello"])], stream=True):
        pass
    # The client still serves the next request.
    async with client.get_response([Message("user", ["again"])], stream=True) as stream:
        updates = [update.text async for update in stream]
    assert updates == ["hi"]


async def test_an_unread_agent_stream_closed_early_still_gives_its_final_response() -> None:
    agent = Agent(client=FakeClient(tokenizer=CharacterEstimatorTokenizer()), name="a")
    stream = agent.run("hello", stream=True)
    await stream.close()
    response = await stream.get_final_response()
    assert response is not None and response.text == "hi"
