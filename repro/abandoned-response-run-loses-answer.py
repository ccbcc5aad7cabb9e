"""A responses= run that is closed before its answer reaches the executor loses the answer.

The workflow asks for an answer. The caller answers with a streaming run and closes that stream at
the first superstep_started event, before the executor got the answer. Answering again with the same
response should deliver it; instead the request is gone.

Exit status: 1 when the answer is lost (the bug), 0 when the retry delivers it exactly once.
"""

import asyncio
import sys
from typing import Any

from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler, response_handler

TIMEOUT = 5


class Asking(Executor):
    def __init__(self) -> None:
        super().__init__(id="asking")
        self.answers: list[str] = []

    @handler
    async def ask(self, question: str, ctx: WorkflowContext[Any, str]) -> None:
        await ctx.request_info(question, str)

    @response_handler
    async def on_answer(self, question: str, answer: str, ctx: WorkflowContext[Any, str]) -> None:
        self.answers.append(answer)
        await ctx.yield_output(f"{question} {answer}")


async def main() -> int:
    asking = Asking()
    workflow = WorkflowBuilder(start_executor=asking).build()
    result = await asyncio.wait_for(workflow.run("deploy?"), TIMEOUT)
    request_id = result.get_request_info_events()[0].request_id

    # Answer, but stop reading before the answer's superstep ran.
    stream = workflow.run(responses={request_id: "yes"}, stream=True)
    async for event in stream:
        if event.type == "superstep_started":
            break
    await asyncio.wait_for(stream.close(), TIMEOUT)

    # Answer again.
    try:
        retry = await asyncio.wait_for(workflow.run(responses={request_id: "yes"}), TIMEOUT)
        observed = f"retry outputs {retry.get_outputs()}, executor got {asking.answers}"
    except Exception as exc:
        observed = f"retry raised {type(exc).__name__}: {exc}; executor got {asking.answers}"
    expected = "retry outputs ['deploy? yes'], executor got ['yes']"
    print(f"observed: {observed}")
    print(f"expected: {expected}")
    return 0 if observed == expected else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
