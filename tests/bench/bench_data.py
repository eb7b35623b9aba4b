"""Inputs shared by every system's workloads (kept free of heavy imports: spawned workers for
the peers and the floor import this without loading proctor.core)."""

from __future__ import annotations

EVENT_BATCH = 20


def action_of(worker: int, i: int) -> dict:
    """A realistic tool action (~250 bytes of canonical JSON)."""
    return {
        "tool": "http.post",
        "args": {
            "url": f"https://api.example.test/v1/orders/{worker}-{i}",
            "body": {
                "sku": f"SKU-{i:06d}",
                "quantity": 1 + i % 5,
                "note": "replace the failing unit; customer approved by phone",
            },
        },
    }


def payload_of(worker: int, i: int) -> dict:
    """A typical tool-output event payload (~300 bytes)."""
    return {
        "tool": "shell",
        "exit_code": 0,
        "step": i,
        "worker": worker,
        "stdout": "collected 48 items; 48 passed in 3.21s " * 4,
    }


def is_write(sql: str) -> bool:
    head = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
    return head in ("INSERT", "UPDATE", "DELETE", "REPLACE")
