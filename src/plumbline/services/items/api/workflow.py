"""``plumbline.items.v1.Workflow``: status transitions."""

from __future__ import annotations

from plumbline.api.core.v1 import core_pb2
from plumbline.api.items.v1 import items_pb2 as pb
from plumbline.api.items.v1 import items_pb2_grpc
from plumbline.common.rpc import Context
from plumbline.services.items.workflow import Workflow


class WorkflowServicer(items_pb2_grpc.WorkflowServicer):
    """Thin mapping onto ``Workflow``."""

    def __init__(self, workflow: Workflow) -> None:
        self.workflow = workflow

    async def ListTransitionOptions(
        self, request: core_pb2.Id, context: Context
    ) -> pb.TransitionList:
        steps = await self.workflow.options(request.id)
        return pb.TransitionList(
            transitions=[
                pb.WorkflowTransition(id=str(t.id), action=t.action, new_status=t.to_option)
                for t in steps
            ]
        )

    async def Transition(self, request: pb.TransitionRequest, context: Context) -> core_pb2.Empty:
        await self.workflow.transition(request.item, request.transition_id, request.comment)
        return core_pb2.Empty()
