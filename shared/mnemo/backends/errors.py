"""Engine failures as the service's errors, at the adapters' edge.

Each backend names the exceptions of its engine that mean "down right now" (a ``classify``
function of the exception and the name of the method it escaped, returning the ``Unavailable`` to
raise, or None); :func:`translate_errors` wraps every public method of an adapter class with it,
so a method added later cannot forget it. Everything else an engine raises is a bug and stays as
it is (the API answers it with a bare 500).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from mnemo.errors import Unavailable

C = TypeVar("C", bound=type)
#: (the exception, the public method it escaped: for the logged cause) → the outage, or None
Classify = Callable[[BaseException, str], Unavailable | None]


def translate_errors(classify: Classify) -> Callable[[C], C]:
    """A class decorator: every public method raises ``classify(exc)`` instead of an outage."""

    def decorate(cls: C) -> C:
        for name, member in list(vars(cls).items()):
            if name.startswith("_") or not inspect.isfunction(member):
                continue
            setattr(cls, name, _wrapped(member, classify))
        return cls

    return decorate


def _wrapped(method: Callable[..., Any], classify: Classify) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except Unavailable:
            raise
        except Exception as exc:
            error = classify(exc, method.__name__)
            if error is None:
                raise
            raise error from exc

    return call
