"""A bot on raw gRPC stubs with one deliberate protocol fault, for check-bot's tests: ``broken_bot.py FAULT``.

FAULT is one of: wrong-request-id, no-hello, index-outside, illegal-action, sigterm-ignored, no-reconnect,
one-game, too-late, flood (hostile), no-backoff, or none (no fault: plays index 0, reconnects with backoff, exits 0
on signals, 1 when refused).
"""

from __future__ import annotations

import os
import queue
import random
import signal
import sys
import time
from collections.abc import Iterator

import grpc
from skyjo_proto.skyjo.v1 import skyjo_pb2 as pb

FAULTS = (
    "none", "wrong-request-id", "no-hello", "index-outside", "illegal-action", "sigterm-ignored", "no-reconnect",
    "one-game", "too-late", "flood", "no-backoff",
)  # fmt: skip
FAULT = sys.argv[1] if len(sys.argv) > 1 else "none"
FATAL = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.ABORTED)


def reply(decision: pb.DecisionRequest) -> pb.PlayRequest:
    rid = decision.request_id
    if FAULT == "wrong-request-id":
        return pb.PlayRequest(reply=pb.DecisionReply(request_id=rid + 1, index=0))
    if FAULT == "index-outside":
        return pb.PlayRequest(reply=pb.DecisionReply(request_id=rid, index=len(decision.legal_actions)))
    if FAULT == "illegal-action":  # a well-formed action the decision does not allow
        draw_due = decision.view.decision == pb.DECISION_KIND_DRAW_OR_TAKE
        action = pb.Action(kind=pb.ACTION_KIND_REVEAL, pos=0) if draw_due else pb.Action(kind=pb.ACTION_KIND_DRAW)
        return pb.PlayRequest(reply=pb.DecisionReply(request_id=rid, action=action))
    if FAULT == "too-late":
        time.sleep(3.0)  # thinks for a fixed time, whatever time_left_ms says
    return pb.PlayRequest(reply=pb.DecisionReply(request_id=rid, index=0))


def session(addr: str, token: str) -> str:
    """One stream: "closed" (the referee ended it), "refused", or why it broke."""
    outbox: queue.SimpleQueue[pb.PlayRequest | None] = queue.SimpleQueue()

    def requests() -> Iterator[pb.PlayRequest]:
        if FAULT == "no-hello":
            yield pb.PlayRequest(reply=pb.DecisionReply(request_id=0, index=0))
        yield pb.PlayRequest(hello=pb.Hello(name="broken", version=FAULT, protocol_version=1))
        if FAULT == "flood":  # a hostile bot: replies nobody asked for, as fast as it can
            for _ in range(200_000):
                yield pb.PlayRequest(reply=pb.DecisionReply(request_id=0, index=0))
        while (message := outbox.get()) is not None:
            yield message

    channel = grpc.insecure_channel(addr)
    play = channel.stream_stream(
        "/skyjo.v1.BotService/Play",
        request_serializer=pb.PlayRequest.SerializeToString,
        response_deserializer=pb.PlayResponse.FromString,
    )
    try:
        for message in play(requests(), metadata=(("authorization", f"Bearer {token}"),)):
            kind = message.WhichOneof("message")
            if kind == "decision":
                outbox.put(reply(message.decision))
            elif kind == "game_over" and FAULT == "one-game":
                os._exit(0)  # stops after its first game
        return "closed"
    except grpc.RpcError as exc:
        code = exc.code() if isinstance(exc, grpc.Call) else grpc.StatusCode.UNKNOWN
        return "refused" if code in FATAL else f"broken: {code}"
    finally:
        outbox.put(None)
        channel.close()


def main() -> int:
    assert FAULT in FAULTS, f"unknown fault {FAULT!r}: expected one of {', '.join(FAULTS)}"
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN if FAULT == "sigterm-ignored" else lambda *_: os._exit(0))
    addr, token = os.environ["SKYJO_ADDR"], os.environ["SKYJO_TOKEN"]
    attempt = 0
    while True:
        outcome = session(addr, token)
        if outcome == "closed":
            return 0
        if outcome == "refused":
            return 1
        if FAULT == "no-reconnect":
            print(f"stream lost ({outcome}); not reconnecting", file=sys.stderr)
            return 0
        if FAULT != "no-backoff":
            time.sleep(min(5.0, 0.1 * 2**attempt) * random.uniform(0.5, 1.0))  # the bot's own backoff
        attempt += 1


if __name__ == "__main__":
    sys.exit(main())
