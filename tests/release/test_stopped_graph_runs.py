"""Graph workflow runs stopped by their caller between supersteps: what worked on the release still works."""

import asyncio
from dataclasses import dataclass

from agent_framework import (
    Executor,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowRunState,
    handler,
    response_handler,
)

TIMEOUT = 10.0


@dataclass
class Job:
    name: str


class Start(Executor):
    @handler
    async def start(self, job: Job, ctx: WorkflowContext[Job]) -> None:
        await ctx.send_message(job)


class Ask(Executor):
    @handler
    async def ask(self, job: Job, ctx: WorkflowContext[Job, str]) -> None:
        await ctx.request_info(f"approve {job.name}?", str)

    @response_handler
    async def answered(self, question: str, answer: str, ctx: WorkflowContext[Job, str]) -> None:
        await ctx.yield_output(f"{question} {answer}")


class Forward(Executor):
    @handler
    async def forward(self, job: Job, ctx: WorkflowContext[Job]) -> None:
        await ctx.send_message(job)


class Record(Executor):
    @handler
    async def record(self, job: Job, ctx: WorkflowContext[Job, str]) -> None:
        await ctx.yield_output(f"{job.name} recorded")


def _review_workflow() -> Workflow:
    start, ask, forward, record = Start(id="start"), Ask(id="ask"), Forward(id="forward"), Record(id="record")
    return (
        WorkflowBuilder(start_executor=start).add_fan_out_edges(start, [ask, forward]).add_edge(forward, record).build()
    )


async def _close_after_the_request_superstep(workflow: Workflow) -> str:
    """Read until the superstep that asked has completed, then close the stream."""
    stream = workflow.run(Job("a"), stream=True)
    request_id = ""
    async for event in stream:
        if event.type == "request_info":
            request_id = event.request_id
        if request_id and event.type == "superstep_completed":
            break
    await asyncio.wait_for(stream.close(), TIMEOUT)
    return request_id


async def test_an_answer_after_a_run_closed_between_supersteps_gets_the_sibling_branch_output() -> None:
    workflow = _review_workflow()
    request_id = await _close_after_the_request_superstep(workflow)

    result = await asyncio.wait_for(workflow.run(responses={request_id: "yes"}), TIMEOUT)
    assert sorted(result.get_outputs()) == ["a recorded", "approve a? yes"]


async def test_the_status_after_a_run_closed_between_supersteps_says_a_request_is_pending() -> None:
    workflow = WorkflowBuilder(start_executor=Ask(id="ask")).build()
    async with workflow.run(Job("a"), stream=True) as stream:
        async for event in stream:
            if event.type == "superstep_completed":
                break

    assert workflow.status == WorkflowRunState.IN_PROGRESS_PENDING_REQUESTS


async def test_an_answer_run_closed_at_its_started_event_leaves_the_status_as_it_was() -> None:
    workflow = WorkflowBuilder(start_executor=Ask(id="ask")).build()
    (request,) = (await asyncio.wait_for(workflow.run(Job("a")), TIMEOUT)).get_request_info_events()
    async with workflow.run(responses={request.request_id: "yes"}, stream=True) as stream:
        async for event in stream:
            assert event.type == "started"
            break  # the run has done nothing yet

    assert workflow.status == WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    result = await asyncio.wait_for(workflow.run(responses={request.request_id: "yes"}), TIMEOUT)
    assert result.get_outputs() == ["approve a? yes"]


async def test_cancel_pending_requests_after_reading_a_run_to_its_final_status() -> None:
    workflow = WorkflowBuilder(start_executor=Ask(id="ask")).build()
    stream = workflow.run(Job("a"), stream=True)
    request_id = ""
    async for event in stream:  # the stream stays referenced: its generator is not finalized yet
        if event.type == "request_info":
            request_id = event.request_id
        if event.type == "status" and event.state == WorkflowRunState.IDLE_WITH_PENDING_REQUESTS:
            break

    result = await asyncio.wait_for(workflow.cancel_pending_requests([request_id]), TIMEOUT)
    assert result.get_final_state() == WorkflowRunState.IDLE
    await asyncio.wait_for(stream.close(), TIMEOUT)


class Note(Executor):
    """Writes a note to the state, then asks for approval; the answer reads the note back."""

    @handler
    async def note(self, job: Job, ctx: WorkflowContext[Job, str]) -> None:
        ctx.set_state("note", job.name)
        await ctx.request_info(f"approve {job.name}?", str)

    @response_handler
    async def answered(self, question: str, answer: str, ctx: WorkflowContext[Job, str]) -> None:
        await ctx.yield_output(f"{ctx.get_state('note')}:{answer}")


async def test_an_answer_after_breaking_out_at_the_request_sees_the_state_written_before_it() -> None:
    workflow = WorkflowBuilder(start_executor=Note(id="note")).build()
    request_id = ""
    async for event in workflow.run(Job("x"), stream=True):
        if event.type == "request_info":
            request_id = event.request_id
            break  # the stream is dropped here, to ask the human

    result = await asyncio.wait_for(workflow.run(responses={request_id: "yes"}), TIMEOUT)
    assert result.get_outputs() == ["x:yes"]


class Join(Executor):
    @handler
    async def join(self, parts: list[str], ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output("|".join(sorted(parts)))


class AskPart(Executor):
    @handler
    async def ask(self, job: Job, ctx: WorkflowContext[str]) -> None:
        await ctx.request_info(f"approve {job.name}?", str)

    @response_handler
    async def answered(self, question: str, answer: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(f"A:{answer}")


class DraftPart(Executor):
    @handler
    async def draft(self, job: Job, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(f"B:{job.name}")


async def test_an_answer_after_closing_at_the_request_joins_the_sibling_branch() -> None:
    start, ask, draft, join = Start(id="start"), AskPart(id="ask"), DraftPart(id="draft"), Join(id="join")
    workflow = (
        WorkflowBuilder(start_executor=start)
        .add_fan_out_edges(start, [ask, draft])
        .add_fan_in_edges([ask, draft], join)
        .build()
    )
    request_id = ""
    async with workflow.run(Job("x"), stream=True) as stream:
        async for event in stream:
            if event.type == "request_info":
                request_id = event.request_id
                break

    result = await asyncio.wait_for(workflow.run(responses={request_id: "yes"}), TIMEOUT)
    assert result.get_outputs() == ["A:yes|B:x"]
