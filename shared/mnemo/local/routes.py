"""Which function serves which HTTP route, as API Gateway routes them — read from the functions.

Each HTTP function's app (``functions/<role>/handler.py``) declares its routes through its
routers, in ``template.yaml``'s path form; the local server routes by those, so it needs no
template at run time (an installed ``mnemo`` has none). ``tests/unit/test_routes.py`` holds this
table and every function's routes to ``template.yaml``, both ways.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from functools import cache

#: template.yaml's functions with HTTP routes (logical id → handler module; the attribute is
#: ``lambda_handler``, as each function's ``Handler: handler.lambda_handler`` says)
HTTP_FUNCTIONS: dict[str, str] = {
    "WriteFunction": "functions.write.handler",
    "ReadFunction": "functions.read.handler",
    "McpFunction": "functions.mcp.handler",
    "AdminFunction": "functions.admin.handler",
}
HANDLER = "lambda_handler"


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # template.yaml's form: /v1/admin/keys/{key_id}/revoke
    function: str  # the template's logical id
    module: str  # e.g. functions.write.handler
    pattern: re.Pattern[str]
    attribute: str = HANDLER

    @property
    def route_key(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def specificity(self) -> tuple[int, int]:
        """Literal paths before parameterised ones, as API Gateway matches them."""
        return (self.path.count("{"), -len(self.path))


def route(method: str, path: str, function: str, module: str) -> Route:
    regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(path))
    return Route(method.upper(), path, function, module, re.compile(f"^{regex}$"))


@cache
def http_routes() -> tuple[Route, ...]:
    """Every route of every HTTP function, most specific first (imports the handlers)."""
    routes: list[Route] = []
    for function, module_name in HTTP_FUNCTIONS.items():
        app = importlib.import_module(module_name).app
        routes.extend(route(method, path, function, module_name) for method, path in app.served)
    return tuple(sorted(routes, key=lambda r: r.specificity))


def match_route(routes: tuple[Route, ...] | list[Route], method: str, path: str) -> tuple[Route, dict[str, str]] | None:
    for candidate in routes:
        if candidate.method in (method, "ANY"):
            found = candidate.pattern.match(path)
            if found:
                return candidate, found.groupdict()
    return None
