"""The four run-able objects under test, built around small instrumented workflows.

Graph family: ``head`` stages a write, yields an output, waits for its run's I/O gate, then either asks for
information or fans out to ``fast`` and ``relay -> slow`` (``slow`` waits for the gate again), which fan in
to ``join``. The sub-workflow family runs that graph as the child of a parent ``Workflow`` (a ``WorkflowExecutor``
that yields the child's outputs and propagates its requests), with checkpoints. The functional family: a
``@workflow`` that stages a write, awaits an I/O ``@step`` and may ask for information. Every handler reports to
the ``Probe``. A turn is a string: ``"r3"``, ``"r3?"`` to ask, or ``"r3!"`` to run an agent's workflow
directly. The stream families run that functional workflow
through the two ``ResponseStream`` forms that read their source differently: buffered (the whole run is read
before the first event) and opened by ``ResponseStream.from_awaitable`` (the run starts at the first read or await).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from agent_framework import (
    AgentResponseUpdate,
    Executor,
    FunctionalWorkflow,
    FunctionalWorkflowAgent,
    FunctionTool,
    InMemoryCheckpointStorage,
    Message,
    ResponseStream,
    RunContext,
    Workflow,
    WorkflowAgent,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowEvent,
    WorkflowExecutor,
    WorkflowMessage,
    handler,
    response_handler,
    step,
    workflow,
)

from scripts.explore.chat import FunctionClient, TelemetryClient, ask, chat_clients
from scripts.explore.invariants import Probe, run_of, tool_name

FAMILIES = (
    "graph", "functional", "agent", "functional-agent", "subworkflow", "functional-buffered", "functional-awaitable",
    "checkpointed", "chat",
)  # fmt: skip

Stream = ResponseStream[Any, Any]
DIRECT = "!"  # a turn that ends so runs the agent's workflow itself, as another part of the program may
# The parent's WorkflowExecutor. A call yields the outputs its sub-workflow run produced as concurrent tasks (upstream's
# gather, on the release too), so they reach the caller in the order the event loop runs those tasks, not the child's.
FORWARDER = "sub"


@dataclass
class Job:
    """A message between graph executors, tagged with its run, the run whose work it continues, and whether it asks."""

    run: str
    origin: str = ""  # an answer continues the asking run's work: the fan-in joins it with that run's messages
    asks: bool = False

    @property
    def work(self) -> str:
        """The run whose work this message carries."""
        return self.origin or self.run


@dataclass
class Ask:
    """The request a run makes when its turn asks for information."""

    run: str


def _tool_names(ctx: WorkflowContext[Any, Any]) -> list[str]:
    return [str(getattr(tool, "name", tool)) for tool in ctx.get_runtime_tools() or []]


class _Head(Executor):
    """Stages a write and yields an output, waits for the run's I/O, then asks or fans out.

    With ``branch_asks`` the head never asks: it fans out a job that asks, and the branch that waits asks.
    """

    def __init__(self, probe: Probe, *, branch_asks: bool = False) -> None:
        super().__init__(id="head")
        self._probe = probe
        self._branch_asks = branch_asks

    @handler
    async def on_turn(self, turn: str, ctx: WorkflowContext[Job, str]) -> None:
        await self._begin(turn, ctx)

    @handler
    async def on_messages(self, messages: list[Message], ctx: WorkflowContext[Job, str]) -> None:
        await self._begin(messages[-1].text, ctx)

    async def _begin(self, turn: str, ctx: WorkflowContext[Job, str]) -> None:
        run = run_of(turn)
        with self._probe.invoked(run, "head", _tool_names(ctx)) as invocation:
            self._probe.stage(invocation, f"head:{run}")
            ctx.set_state(f"head:{run}", run)
            await ctx.yield_output(f"{run}:head")
            await self._probe.gate(run).wait()
            if turn.endswith("?") and not self._branch_asks:
                await ctx.request_info(Ask(run), str)
            else:
                await ctx.send_message(Job(run, asks=turn.endswith("?")))

    @response_handler
    async def on_answer(self, original: Ask, answer: str, ctx: WorkflowContext[Job, str]) -> None:
        with self._probe.invoked(answer, "head.answer", _tool_names(ctx)) as invocation:
            self._probe.stage(invocation, f"answer:{answer}")
            ctx.set_state(f"answer:{answer}", original.run)
            await ctx.yield_output(f"{answer}:answered")
            await ctx.send_message(Job(answer))


class _Forward(Executor):
    """Stages a write and forwards the job; with ``wait``, only once the run's gate is open, and asks if the job asks.

    The answer continues the asking run's work: it is forwarded as a job of the answering run for the asking one.
    """

    def __init__(self, probe: Probe, name: str, *, wait: bool = False) -> None:
        super().__init__(id=name)
        self._probe = probe
        self._wait = wait

    @handler
    async def on_job(self, job: Job, ctx: WorkflowContext[Job]) -> None:
        with self._probe.invoked(job.run, self.id, _tool_names(ctx)) as invocation:
            self._probe.stage(invocation, f"{self.id}:{job.run}")
            ctx.set_state(f"{self.id}:{job.run}", job.run)
            if self._wait:
                await self._probe.gate(job.run).wait()
                if job.asks:
                    await ctx.request_info(Ask(job.run), str)
                    return
            await ctx.send_message(job)

    @response_handler
    async def on_answer(self, original: Ask, answer: str, ctx: WorkflowContext[Job]) -> None:
        with self._probe.invoked(answer, f"{self.id}.answer", _tool_names(ctx)) as invocation:
            self._probe.stage(invocation, f"answer:{answer}")
            ctx.set_state(f"answer:{answer}", original.run)
            await ctx.send_message(Job(answer, original.run))


class _Join(Executor):
    """The fan-in: every job it joins must come from one run."""

    def __init__(self, probe: Probe) -> None:
        super().__init__(id="join")
        self._probe = probe

    @handler
    async def on_jobs(self, jobs: list[Job], ctx: WorkflowContext[Job, str]) -> None:
        self._probe.joined("join", (job.work for job in jobs))
        run = jobs[-1].run
        with self._probe.invoked(run, "join", _tool_names(ctx)) as invocation:
            self._probe.stage(invocation, f"join:{run}")
            ctx.set_state(f"join:{run}", run)
            await ctx.yield_output(f"{run}:done")


def graph_workflow(probe: Probe, checkpoints: InMemoryCheckpointStorage | None = None) -> Workflow:
    """The instrumented graph workflow; with ``checkpoints``, it takes them and asks in the ``slow`` branch.

    Then a request is pending while the fan-in holds the ``fast`` branch's message, which a resumed run restores.
    """
    head, join = _Head(probe, branch_asks=checkpoints is not None), _Join(probe)
    fast, relay, slow = _Forward(probe, "fast"), _Forward(probe, "relay"), _Forward(probe, "slow", wait=True)
    return (
        WorkflowBuilder(start_executor=head, checkpoint_storage=checkpoints)
        .add_fan_out_edges(head, [fast, relay])
        .add_edge(relay, slow)
        .add_fan_in_edges([fast, slow], join)
        .build()
    )


def _io_replay_key(run: str) -> str:
    return f"io:{run}"


def functional_workflow(probe: Probe) -> FunctionalWorkflow:
    """The instrumented functional workflow."""

    @step(replay_key=_io_replay_key)
    async def io(run: str) -> str:
        await probe.gate(run).wait()
        return run

    @workflow
    async def flow(turn: str, ctx: RunContext) -> str:
        run = run_of(turn)
        with probe.invoked(run, "flow") as invocation:
            probe.stage(invocation, f"flow:{run}")
            ctx.set_state(f"flow:{run}", run)
            await io(run)
            if turn.endswith("?"):
                answer = str(await ctx.request_info(Ask(run), str))
                return f"{answer}:done"
            return f"{run}:done"

    return flow.build()


class Subject(Protocol):
    """One run-able object with its probe: how to start, answer and observe its runs."""

    probe: Probe

    def start(self, turn: str) -> Stream:
        """Start a run for ``turn`` (refusal raises)."""
        ...

    def answer(self, request_id: str, run: str) -> Stream | None:
        """Start run ``run`` that answers ``request_id``; None when this object cannot answer."""
        ...

    async def cancel_pending(self, request_ids: list[str]) -> bool:
        """``cancel_pending_requests()``; False when this object has none."""
        ...

    def status(self) -> str | None:
        """The workflow's status, if it has one."""
        ...

    drained: set[str]  # requests whose answers a run has taken up (where runs answer requests)

    async def is_pending(self, request_id: str) -> bool:
        """Whether ``request_id`` can be answered (again); False where runs answer no requests."""
        ...

    async def latest_checkpoint(self) -> str | None:
        """The id of the latest checkpoint, if the object takes checkpoints."""
        ...

    def restore(self, checkpoint_id: str) -> Stream:
        """Start a run that resumes from checkpoint ``checkpoint_id`` (refusal raises)."""
        ...

    def committed_state(self) -> Mapping[str, object] | None:
        """The committed shared state, if the object shares state across runs."""
        ...

    def observe(self, item: Any) -> tuple[str | None, str | None, list[str]]:
        """An item's output tag, status and request ids."""
        ...

    def forwarding(self, item: Any) -> bool | None:
        """True where ``item`` begins a call that yields its outputs in no order, False where it ends one, else None."""
        ...


def _observe_event(event: WorkflowEvent[Any]) -> tuple[str | None, str | None, list[str]]:
    if event.type == "output":
        return str(event.data), None, []
    if event.type == "status" and event.state is not None:
        return None, str(event.state.value), []
    if event.type == "request_info":
        return None, None, [event.request_id]
    return None, None, []


def _observe(item: Any) -> tuple[str | None, str | None, list[str]]:
    """An item's output tag, status and request ids: a workflow's event or an agent's update."""
    if isinstance(item, WorkflowEvent):
        return _observe_event(cast("WorkflowEvent[Any]", item))
    return _observe_update(item)


def _forwarding(item: Any, forwarder: str) -> bool | None:
    """Whether ``item`` begins (True) or ends (False) a call of the executor ``forwarder``, if it is such an event."""
    if not isinstance(item, WorkflowEvent) or cast("WorkflowEvent[Any]", item).executor_id != forwarder:
        return None
    return {"executor_invoked": True, "executor_completed": False, "executor_failed": False}.get(item.type)


def _observe_update(update: AgentResponseUpdate) -> tuple[str | None, str | None, list[str]]:
    requests = [str(content.id) for content in update.contents if content.type == "function_approval_request"]
    return (update.text or None), None, requests


@dataclass
class _GraphSubject:
    """A graph ``Workflow``; with ``agent``, driven through its ``WorkflowAgent``."""

    probe: Probe
    workflow: Workflow
    agent: WorkflowAgent | None = None
    child: Workflow | None = None  # the sub-workflow whose state the handlers write
    checkpoints: InMemoryCheckpointStorage | None = None
    drained: set[str] = field(default_factory=set[str])  # requests whose answers a superstep has taken up

    def __post_init__(self) -> None:
        context = self.workflow._runner.context  # pyright: ignore[reportPrivateUsage]
        drain = context.drain_messages

        async def drain_and_note() -> dict[str, list[WorkflowMessage]]:
            batches = await drain()
            for message in (message for batch in batches.values() for message in batch):
                if message.original_request_info_event is not None:
                    self.drained.add(message.original_request_info_event.request_id)
            return batches

        context.drain_messages = drain_and_note  # the explorer's own instrumentation of the shared runner

    async def is_pending(self, request_id: str) -> bool:
        """Whether ``request_id`` can be answered (again)."""
        context = self.workflow._runner.context  # pyright: ignore[reportPrivateUsage]
        return request_id in await context.get_pending_request_info_events()

    def start(self, turn: str) -> Stream:
        tools = [FunctionTool(name=tool_name(run_of(turn)))]
        if self.agent is not None and not turn.endswith(DIRECT):
            return self.agent.run(turn, stream=True, tools=tools)
        return self.workflow.run(turn, stream=True, tools=tools)

    def answer(self, request_id: str, run: str) -> Stream | None:
        if self.agent is not None:
            return None
        tool = FunctionTool(name=tool_name(run))
        return self.workflow.run(responses={request_id: run}, stream=True, tools=[tool])

    async def cancel_pending(self, request_ids: list[str]) -> bool:
        if self.agent is not None:
            return False
        await self.workflow.cancel_pending_requests(request_ids or ["nothing-pending"])
        return True

    def status(self) -> str | None:
        return str(self.workflow.status.value)

    async def latest_checkpoint(self) -> str | None:
        if self.checkpoints is None:
            return None
        latest = await self.checkpoints.get_latest(workflow_name=self.workflow.name)
        return None if latest is None else latest.checkpoint_id

    def restore(self, checkpoint_id: str) -> Stream:
        return self.workflow.run(checkpoint_id=checkpoint_id, stream=True)

    def committed_state(self) -> Mapping[str, object] | None:
        return (self.child or self.workflow)._runner.state.export_state()  # pyright: ignore[reportPrivateUsage]

    def observe(self, item: Any) -> tuple[str | None, str | None, list[str]]:
        return _observe(item)

    def forwarding(self, item: Any) -> bool | None:
        """A call of the sub-workflow's ``WorkflowExecutor``: it yields the child's outputs concurrently (a gather)."""
        return None if self.child is None else _forwarding(item, FORWARDER)


@dataclass
class _Unanswered:
    """What an object without requests, checkpoints, status or shared state answers: nothing."""

    probe: Probe
    drained: set[str] = field(default_factory=set[str])  # never filled: its runs are not answered again

    async def is_pending(self, request_id: str) -> bool:
        return False

    def answer(self, request_id: str, run: str) -> Stream | None:
        return None

    async def cancel_pending(self, request_ids: list[str]) -> bool:
        return False

    def status(self) -> str | None:
        return None

    async def latest_checkpoint(self) -> str | None:
        return None

    def restore(self, checkpoint_id: str) -> Stream:
        raise NotImplementedError("this object takes no checkpoints")

    def committed_state(self) -> Mapping[str, object] | None:
        return None

    def forwarding(self, item: Any) -> bool | None:
        return None


@dataclass
class _FunctionalSubject(_Unanswered):
    """A ``FunctionalWorkflow``; with ``agent``, driven through its ``FunctionalWorkflowAgent``."""

    workflow: FunctionalWorkflow = field(kw_only=True)
    agent: FunctionalWorkflowAgent | None = None

    def __post_init__(self) -> None:
        # The explorer's own instrumentation of the workflow: where a run that completes or asks again settles it
        for name in ("_clear_replay_state", "_capture_replay_state"):
            setattr(self.workflow, name, self._noting(getattr(self.workflow, name)))

    def _noting(self, settle: Callable[..., None]) -> Callable[..., None]:
        """``settle`` (it replaces the replay state), noting the requests it took up: pending before, not after."""

        def settle_and_note(*args: Any, **kwargs: Any) -> None:
            pending = set(self.workflow._last_pending_request_ids)  # pyright: ignore[reportPrivateUsage]
            settle(*args, **kwargs)
            self.drained |= pending - self.workflow._last_pending_request_ids  # pyright: ignore[reportPrivateUsage]

        return settle_and_note

    async def is_pending(self, request_id: str) -> bool:
        """Whether ``request_id`` can be answered (again): a responses= run would replay it."""
        return request_id in self.workflow._last_pending_request_ids  # pyright: ignore[reportPrivateUsage]

    def start(self, turn: str) -> Stream:
        if self.agent is not None and not turn.endswith(DIRECT):
            return self.agent.run(turn, stream=True)
        return self.workflow.run(turn, stream=True)

    def answer(self, request_id: str, run: str) -> Stream | None:
        if self.agent is not None:
            return self.agent.run(responses={request_id: run}, stream=True)
        return self.workflow.run(responses={request_id: run}, stream=True)

    def observe(self, item: Any) -> tuple[str | None, str | None, list[str]]:
        return _observe(item)


@dataclass
class _ChatSubject(_Unanswered):
    """A chat client with upstream's layers: even runs through one layered client, odd ones through the other."""

    clients: tuple[TelemetryClient, FunctionClient] = field(kw_only=True)

    def start(self, turn: str) -> Stream:
        return ask(self.clients[int(run_of(turn)[1:]) % 2], turn)

    def observe(self, item: Any) -> tuple[str | None, str | None, list[str]]:
        return (getattr(item, "text", None) or None), None, []


@dataclass
class _StreamFormSubject(_FunctionalSubject):
    """A ``FunctionalWorkflow`` whose run streams are ``buffered`` or opened through ``from_awaitable``."""

    form: str = "buffered"

    def start(self, turn: str) -> Stream:
        return self._open(lambda: self.workflow.run(turn, stream=True))

    def answer(self, request_id: str, run: str) -> Stream | None:
        return self._open(lambda: self.workflow.run(responses={request_id: run}, stream=True))

    def _open(self, run: Callable[[], Stream]) -> Stream:
        if self.form == "buffered":
            return run().buffer_updates()

        async def opening() -> Stream:
            return run()

        awaitable = opening()
        stream = Stream.from_awaitable(awaitable)
        return stream.with_cleanup_hook(lambda: self._check_awaited(awaitable))

    def _check_awaited(self, awaitable: Coroutine[Any, Any, Stream]) -> None:
        """Once the stream is cleaned up (read to its end, failed or closed), its awaitable has run or was closed."""
        if inspect.getcoroutinestate(awaitable) == inspect.CORO_CREATED:
            self.probe.violate("never-awaited", "a from_awaitable() stream was cleaned up, its awaitable never awaited")


def subworkflow_parent(child: Workflow, checkpoints: InMemoryCheckpointStorage) -> Workflow:
    """A parent workflow that runs ``child`` as its only executor, surfacing its outputs and requests."""
    sub = WorkflowExecutor(child, id=FORWARDER, allow_direct_output=True, propagate_request=True)
    return WorkflowBuilder(start_executor=sub, checkpoint_storage=checkpoints).build()


def build_subject(family: str) -> Subject:
    """A fresh instrumented object of ``family``."""
    probe = Probe(exclusive=family != "chat")
    if family == "chat":
        return _ChatSubject(probe, clients=chat_clients(probe))
    if family == "subworkflow":
        child, checkpoints = graph_workflow(probe), InMemoryCheckpointStorage()
        return _GraphSubject(probe, subworkflow_parent(child, checkpoints), child=child, checkpoints=checkpoints)
    if family == "checkpointed":
        checkpoints = InMemoryCheckpointStorage()
        return _GraphSubject(probe, graph_workflow(probe, checkpoints), checkpoints=checkpoints)
    if family in ("graph", "agent"):
        graph = graph_workflow(probe)
        return _GraphSubject(probe, graph, graph.as_agent() if family == "agent" else None)
    functional = functional_workflow(probe)
    if family in ("functional-buffered", "functional-awaitable"):
        return _StreamFormSubject(probe, workflow=functional, form=family.removeprefix("functional-"))
    agent = functional.as_agent() if family == "functional-agent" else None
    return _FunctionalSubject(probe, workflow=functional, agent=agent)
