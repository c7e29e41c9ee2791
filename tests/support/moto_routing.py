"""moto's server finds the service a request is for by first listing its own package's folders:
an ``os.listdir`` and some 150 ``isdir`` calls on every request (``list_of_moto_modules``, from
``DomainDispatcherApplication.get_backend_for_host``) — 23 s of the engines session's 884 s under
py-spy, 2026-12-02. The folders of an installed moto do not change while it runs, so the suite's
moto servers list them once."""

from __future__ import annotations

from tests.support.moto_patch import MotoPatch

_LISTED: tuple[str, ...] = ()


def _list_of_moto_modules() -> tuple[str, ...]:
    global _LISTED
    if not _LISTED:
        _LISTED = tuple(_PATCH.original("list_of_moto_modules")())
    return _LISTED


#: the function lives in ``moto.backends``, which the server's dispatcher imports as ``backends``
_PATCH = MotoPatch("moto.moto_server.werkzeug_app:backends", list_of_moto_modules=_list_of_moto_modules)
install, uninstall = _PATCH.install, _PATCH.uninstall
