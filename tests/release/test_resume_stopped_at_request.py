"""A resumed human-in-the-loop run, read until its request and stopped there, keeps what the checkpoint restored."""

import asyncio
from dataclasses import dataclass

from agent_framework import (
    Executor,
    InMemoryCheckpointStorage,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)

TIMEOUT = 10.0


@dataclass
class Question:
    text: str


class Split(Executor):
    @handler
    async def start(self, topic: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(topic)


class Ask(Executor):
    @handler
    async def ask(self, topic: str, ctx: WorkflowContext[str]) -> None:
        await ctx.request_info(Question(f"approve {topic}?"), str)

    @response_handler
    async def answered(self, original: Question, answer: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(f"human:{answer}")


class Draft(Executor):
    @handler
    async def draft(self, topic: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(f"draft:{topic}")


class Join(Executor):
    @handler
    async def join(self, parts: list[str], ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output("+".join(sorted(parts)))


def build(storage: InMemoryCheckpointStorage):
    split, ask, draft, join = Split(id="split"), Ask(id="ask"), Draft(id="draft"), Join(id="join")
    return (
        WorkflowBuilder(name="review", start_executor=split, checkpoint_storage=storage)
        .add_fan_out_edges(split, [ask, draft])
        .add_fan_in_edges([ask, draft], join)
        .build()
    )


async def test_answer_after_a_resume_stopped_at_its_request_joins_the_restored_fan_in() -> None:
    storage = InMemoryCheckpointStorage()
    first = await asyncio.wait_for(build(storage).run("x"), TIMEOUT)
    [request] = first.get_request_info_events()
    latest = await storage.get_latest(workflow_name=build(storage).name)
    assert latest is not None

    # A later process resumes, reads until the request comes again and stops there to ask the human.
    workflow = build(storage)
    async with workflow.run(checkpoint_id=latest.checkpoint_id, stream=True) as resumed:
        async for event in resumed:
            if event.type == "request_info":
                assert event.request_id == request.request_id
                break

    answered = await asyncio.wait_for(workflow.run(responses={request.request_id: "yes"}), TIMEOUT)
    assert answered.get_outputs() == ["draft:x+human:yes"]
