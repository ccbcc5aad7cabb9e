"""A human-in-the-loop caller answers a request with a streaming run and stops at the follow-up request it raises (to
show it), then answers that: the answer is handled in the third superstep, within a three-superstep budget."""

import asyncio
from typing import Any

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler, response_handler

TIMEOUT = 10.0


class Reviewer(Executor):
    """Asks for approval; an approval yields an output and asks for a confirmation, in the same superstep."""

    @handler
    async def ask(self, change: str, ctx: WorkflowContext[Any, str]) -> None:
        await ctx.request_info(f"approve {change}?", str)

    @response_handler
    async def on_answer(self, question: str, answer: str, ctx: WorkflowContext[Any, str]) -> None:
        await ctx.yield_output(f"{question} {answer}")
        if question.startswith("approve"):
            await ctx.request_info(f"confirm {question.removeprefix('approve ')}", str)


async def test_the_answer_to_a_follow_up_request_a_closed_run_raised_runs_in_the_next_superstep() -> None:
    workflow = WorkflowBuilder(start_executor=Reviewer(id="reviewer"), max_iterations=3).build()
    (request,) = (await asyncio.wait_for(workflow.run("deploy"), TIMEOUT)).get_request_info_events()
    follow_up = None
    async with workflow.run(responses={request.request_id: "yes"}, stream=True) as stream:
        async for event in stream:
            if event.type == "request_info":
                follow_up = event.request_id
                break
    assert follow_up is not None

    result = await asyncio.wait_for(workflow.run(responses={follow_up: "yes"}), TIMEOUT)

    assert [event.iteration for event in result if event.type == "superstep_started"] == [3]
    assert result.get_outputs() == ["confirm deploy? yes"]
