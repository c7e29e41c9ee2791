"""What this process may count on from the machine it runs on: the cores it may use (pinned ones,
fewer under a container's cgroup CPU quota) and whether one of them is to spare now. The service
asks before it runs work on a second thread (``service.vectors.embed_query_aside``)."""

from __future__ import annotations

import functools
import os
from pathlib import Path

CGROUP = Path("/sys/fs/cgroup")


def cpu_quota(root: Path | None = None) -> float | None:
    """The CPUs a cgroup quota lets this process use (a container run with ``--cpus``), None when
    none is set: cgroup v2's ``cpu.max``, else v1's ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``,
    under ``root`` (default :data:`CGROUP`)."""
    root = CGROUP if root is None else root
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((root / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota_us / period_us if quota_us > 0 and period_us > 0 else None


@functools.cache
def usable_cores() -> float:
    """The cores this process may run on: those it is pinned to, fewer if a cgroup quota says so
    (worked out once per process)."""
    try:
        cores: float = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    quota = cpu_quota()
    return min(cores, quota) if quota is not None else cores


def spare_core() -> bool:
    """Whether this machine has had a core to spare: two cores or more for this process
    (:func:`usable_cores`) and the 1-minute load average below them. A second thread only pays with
    a core to run on: with the cores taken by other work the query's vector made aside cost recall
    more wall time and more CPU than made in line (bench/results/2026-12-05-recall-aside.md; gated,
    bench/results/2026-12-05-recall-aside-gate.md)."""
    cores = usable_cores()
    if cores < 2:
        return False
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average here: take no chance
        return False
    return load < cores
