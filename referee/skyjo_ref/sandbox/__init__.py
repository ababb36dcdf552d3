"""Sandboxing managed bots: isolation, resource limits, a process cap, and the whole process tree killed.

A league runs code it did not write. The room has five parts:

- ``limits.py``: the vocabulary (:class:`Limits`, :class:`Sandbox`, the ``isolation`` modes);
- ``namespaces.py``: what the host allows, and the isolated view of the machine a bot gets (bubblewrap);
- ``cgroups.py``: a cgroup per bot and per bot process: caps, a fair CPU share, its CPU time, and a way to kill;
- ``seccomp.py``: the system calls an isolated bot may not make (channels between sandboxes, kernel surface);
- ``plan.py``: one process's plan, applied by its ``supervisor.py``, and how its end is read.

docs/sandbox.md is the threat model: what is protected, from whom, and what is not.
"""

from skyjo_ref.sandbox.cgroups import (
    bot_memory_mb,
    cpu_used_s,
    kill_group,
    oom_kills,
    pids_cgroups,
    pids_limit_hits,
    remove_group,
    retire_group,
)
from skyjo_ref.sandbox.limits import ISOLATIONS, Isolation, Limits, Sandbox, SandboxUnavailable, merge
from skyjo_ref.sandbox.namespaces import (
    BotView,
    default_isolation,
    isolation_problem,
    network_isolation,
    process_cap,
    protect_referee,
    python_runtime,
    readable_by_all,
    referee_code,
    share_socket,
    user_namespaces,
)
from skyjo_ref.sandbox.plan import (
    BOT_MEMORY_LIMIT,
    SDK_OUT_OF_MEMORY,
    TOTAL_CPU_LIMIT,
    SandboxPlan,
    check_sandbox,
    classify_exit,
    describe_returncode,
    plan_for,
)

__all__ = [
    "BOT_MEMORY_LIMIT",
    "ISOLATIONS",
    "SDK_OUT_OF_MEMORY",
    "TOTAL_CPU_LIMIT",
    "BotView",
    "Isolation",
    "Limits",
    "Sandbox",
    "SandboxPlan",
    "SandboxUnavailable",
    "bot_memory_mb",
    "check_sandbox",
    "classify_exit",
    "cpu_used_s",
    "default_isolation",
    "describe_returncode",
    "isolation_problem",
    "kill_group",
    "merge",
    "network_isolation",
    "oom_kills",
    "pids_cgroups",
    "pids_limit_hits",
    "plan_for",
    "process_cap",
    "protect_referee",
    "python_runtime",
    "readable_by_all",
    "referee_code",
    "remove_group",
    "retire_group",
    "share_socket",
    "user_namespaces",
]
