"""mnemo.coldstart pauses the garbage collector while a handler loads, inside Lambda only."""

from __future__ import annotations

import gc
import importlib
import sys
from types import ModuleType

import pytest


def fresh_import() -> ModuleType:
    sys.modules.pop("mnemo.coldstart", None)
    return importlib.import_module("mnemo.coldstart")


@pytest.fixture
def collector():
    assert gc.isenabled()
    yield
    gc.unfreeze()
    gc.enable()


def test_inside_lambda_the_collector_waits_until_the_handler_is_loaded_then_skips_it(collector, monkeypatch):
    monkeypatch.setenv("LAMBDA_TASK_ROOT", "/var/task")
    coldstart = fresh_import()
    paused = not gc.isenabled()
    coldstart.done()

    assert paused
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0
    coldstart.done()  # a second call changes nothing
    assert gc.isenabled()


def test_outside_lambda_the_collector_is_left_alone(collector, monkeypatch):
    monkeypatch.delenv("LAMBDA_TASK_ROOT", raising=False)
    coldstart = fresh_import()
    assert gc.isenabled()
    coldstart.done()

    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_a_warm_process_freezes_what_it_holds_and_collects_its_garbage_first(collector):
    import weakref

    from mnemo import coldstart

    class Node:
        pass

    kept, garbage = Node(), Node()
    garbage.self = garbage  # a cycle: only the collector frees it
    gone = weakref.ref(garbage)
    del garbage
    coldstart.freeze()

    assert gone() is None  # collected, not frozen for the process's life
    assert gc.get_freeze_count() > 0
    # frozen: in no generation a collection walks
    assert all(o is not kept for o in gc.get_objects())


def test_inside_lambda_the_service_built_on_the_first_request_is_frozen_too(collector, monkeypatch):
    monkeypatch.setenv("LAMBDA_TASK_ROOT", "/var/task")
    coldstart = fresh_import()
    coldstart.done()
    loaded = gc.get_freeze_count()
    service = [object() for _ in range(10)], {"clients": [[] for _ in range(10)]}  # what building it made

    coldstart.built()

    assert gc.get_freeze_count() > loaded
    assert all(o is not service for o in gc.get_objects())


def test_outside_lambda_building_the_service_freezes_nothing(collector, monkeypatch):
    monkeypatch.delenv("LAMBDA_TASK_ROOT", raising=False)
    coldstart = fresh_import()
    coldstart.built()
    assert gc.get_freeze_count() == 0
