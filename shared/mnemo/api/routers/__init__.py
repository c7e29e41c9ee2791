"""One router per surface: ``tools`` (REST tools), ``admin`` (``/v1/admin``), ``meta``
(``/openapi.json``, ``/healthz``) and ``mcp`` (``/mcp``). Each function includes the ones it serves."""
