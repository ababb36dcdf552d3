"""A referee that stops while an RPC is still running leaves no grpc traceback behind (issue 22).

grpc's aio server prints ``_schedule_rpc_coro ... CancelledError`` with ``traceback.print_exc()`` when the loop
closes while its task around an RPC is still waiting on it; RefereeServer.stop() waits for those tasks. Each case
runs in its own process (the print happens as asyncio.run closes the loop) with an RPC held open on the server:
the client has read the stream's first message, so the handler is running and parked (an event, not a timing).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    """\
    import asyncio
    import sys

    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from skyjo_ref.server import RefereeServer, ServerConfig


    async def main(grace: float | None, cancel_first: bool) -> None:
        server = RefereeServer(ServerConfig(address="127.0.0.1:0"))
        await server.start()
        channel = grpc.aio.insecure_channel(server.address)
        call = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""))
        first = await call.read()  # the Watch handler runs on the server and waits for a change: held
        assert first.status == health_pb2.HealthCheckResponse.SERVING, first
        if cancel_first:
            call.cancel()
        await server.stop(grace=grace)
        await channel.close()


    grace = None if sys.argv[1] == "none" else float(sys.argv[1])
    asyncio.run(main(grace, sys.argv[2] == "cancel"))
    print("left cleanly")
    """
)


@pytest.mark.parametrize(("grace", "how"), [("0", "held"), ("none", "held"), ("0.5", "held"), ("0", "cancel")])
def test_stopping_with_an_rpc_in_flight_prints_no_grpc_traceback(tmp_path: Path, grace: str, how: str) -> None:
    script = tmp_path / "stop_while_held.py"
    script.write_text(SCRIPT, encoding="utf-8")
    env = {"GRPC_VERBOSITY": "NONE", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, str(script), grace, how], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "left cleanly\n"
    assert "Traceback" not in done.stderr and "_schedule_rpc_coro" not in done.stderr, done.stderr
