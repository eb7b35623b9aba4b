"""Each adapter's mapping of one Proctor verdict to its runtime's decision, including an edit
(core's edit-then-approve): an edit passes on the edited arguments only where the runtime can
run them, and never lets the unedited call run."""

from __future__ import annotations

from pydantic_ai import ToolApproved, ToolDenied

from proctor.core.integrations import langgraph_review as review
from proctor.core.integrations.gates import Verdict
from proctor.core.integrations.openai_agents import apply
from proctor.core.integrations.pydanticai import tool_result

EDITED = Verdict(
    approval_id="apr_1",
    status="approved",
    approved=True,
    edited=True,
    args={"to": "alice@example.com"},
    decided_by="operator:alice",
)
DENIED = Verdict(
    approval_id="apr_1", status="denied", reason="wrong person", decided_by="operator:alice"
)
ALL = frozenset({"approve", "edit", "reject", "respond"})


def r(allowed=ALL) -> review.Review:
    return review.Review(
        name="send_email",
        args={"to": "bob@example.com"},
        description="d",
        allowed=frozenset(allowed),
    )


def test_langchain_edit_and_reject():
    assert review.hitl_answer(r(), EDITED) == {
        "type": "edit",
        "edited_action": {"name": "send_email", "args": {"to": "alice@example.com"}},
    }
    no_edit = review.hitl_answer(r({"approve", "reject"}), EDITED)
    assert no_edit["type"] == "reject" and "edited" in no_edit["message"]
    assert review.hitl_answer(r(), DENIED) == {
        "type": "reject",
        "message": "Denied on the Proctor desk by operator:alice: wrong person",
    }


def test_prebuilt_human_interrupt_edit():
    legacy = r({"approve", "edit", "respond", "ignore"})
    assert review.legacy_answer(legacy, EDITED) == {
        "type": "edit",
        "args": {"action": "send_email", "args": {"to": "alice@example.com"}},
    }
    refused = review.legacy_answer(r({"approve", "respond"}), EDITED)
    assert refused["type"] == "response" and "not run" in refused["args"]


def test_pydantic_ai_edit_overrides_the_args():
    assert tool_result(EDITED) == ToolApproved(override_args={"to": "alice@example.com"})
    denied = tool_result(DENIED)
    assert isinstance(denied, ToolDenied) and "wrong person" in denied.message


class FakeState:
    def __init__(self) -> None:
        self.calls: list = []

    def approve(self, item) -> None:
        self.calls.append(("approve", item))

    def reject(self, item, *, rejection_message=None) -> None:
        self.calls.append(("reject", rejection_message))


def test_openai_agents_edit_is_a_rejection_not_the_unedited_call():
    state = FakeState()
    apply(state, "item", EDITED)
    [(kind, message)] = state.calls
    assert kind == "reject" and "edited" in message
    state = FakeState()
    apply(state, "item", DENIED)
    assert state.calls == [("reject", "Denied on the Proctor desk by operator:alice: wrong person")]
