"""A workflow run that is closed before it finishes leaves Workflow.status at IN_PROGRESS.

The caller closes a run's stream while its executor is working. The run is over, but
Workflow.status stays IN_PROGRESS for good, and the WorkflowAgent of that workflow refuses
every later turn ("invalid state to restart").
"""

import asyncio
import sys

from agent_framework import Executor, Message, WorkflowBuilder, WorkflowContext, handler

TIMEOUT = 5.0


class Chat(Executor):
    def __init__(self) -> None:
        super().__init__(id="chat")
        self.gate = asyncio.Event()

    @handler
    async def handle(self, messages: list[Message], ctx: WorkflowContext[list[Message], str]) -> None:
        await self.gate.wait()
        await ctx.yield_output(f"answer to {messages[-1].text}")


async def main() -> bool:
    chat = Chat()
    workflow = WorkflowBuilder(start_executor=chat).build()
    stream = workflow.run([Message(role="user", contents=["first"])], stream=True)
    async for event in stream:
        if event.type == "executor_invoked":
            break
    await stream.close()
    status = workflow.status

    chat.gate.set()
    try:
        answer = (await asyncio.wait_for(workflow.as_agent().run("second"), TIMEOUT)).text
    except Exception as exc:
        answer = f"{type(exc).__name__}: {exc}"
    print(f"observed: status after close() is {status.value}; the agent's next turn gave {answer!r}")
    print("expected: status after close() is CANCELLED; the agent's next turn gave 'answer to second'")
    return status.value == "CANCELLED" and answer == "answer to second"


sys.exit(0 if asyncio.run(main()) else 1)
