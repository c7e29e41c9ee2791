"""Configuration: one validated model, read from the environment once per process.

Every ``MNEMO_*`` variable Mnemo reads is a field of :class:`Settings`, from ``MNEMO_<FIELD>`` (any
case); a value given to the constructor wins over the environment (the CLI's flags). The fields of
the ``mnemo hook`` client are declared in :mod:`mnemo.clientconfig` (standard library only: the
hook's cold start) and inherited here. docs/configuration.md is generated from this module
(``make docs``). A variable that names no field is one warning line at start naming the closest
field (:func:`unknown_variables`), since a misspelt setting would otherwise be silently ignored.

The environment is read here rather than through pydantic-settings, whose ``BaseSettings`` costs
more CPU per Lambda cold import (bench/results/coldstart-built.md) for features these flat fields
do not need; pydantic still parses and validates every value.
"""

from __future__ import annotations

import difflib
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from mnemo.clientconfig import ENV_PREFIX, ClientSettings

#: ``MNEMO_*`` variables that are not Mnemo's settings, so never warned about: the repository's
#: tooling (test suites, scripts) and the client examples of README and docs/agents.md
NOT_SETTINGS = {
    "MNEMO_SAM": "tests/built: the SAM CLI to build with",
    "MNEMO_SUITES_LOGS": "scripts/suites.py: where the suites' logs go",
    "MNEMO_CHROMIUM": "tests: the browser of the console's tests",
    "MNEMO_CHROMEDRIVER": "tests: its driver",
    "MNEMO_OPENSEARCH_USER": "tests: the user the test OpenSearch node runs as",
    "MNEMO_OPENSEARCH_CACHE": "scripts/opensearch.sh: where the distribution is kept",
    "MNEMO_OPENSEARCH_VERSION": "scripts/opensearch.sh: which distribution",
    "MNEMO_KEYCLOAK_CACHE": "scripts/keycloak.sh: where the distribution is kept",
    "MNEMO_KEYCLOAK_VERSION": "scripts/keycloak.sh: which distribution",
    "MNEMO_KEYCLOAK_JAVA_HOME": "scripts/keycloak.sh: the Java it runs on",
    "MNEMO_MCP": "README's TypeScript client example: the MCP endpoint",
    "MNEMO_AUTH": "docs/agents.md's mcp-remote example: the Authorization header",
    "MNEMO_CALLSPLIT_OUT": "bench/callsplit.py: where the server's stage timings go",
}
#: prefixes of the test suites' own variables (``MNEMO_REQUIRE_OPENSEARCH``, ``MNEMO_TEST_*``)
NOT_SETTINGS_PREFIXES = ("MNEMO_REQUIRE_", "MNEMO_TEST_")


def environment() -> dict[str, str]:
    """The ``MNEMO_*`` variables, by lower-cased field name."""
    return {k[len(ENV_PREFIX) :].lower(): v for k, v in os.environ.items() if k.upper().startswith(ENV_PREFIX)}


def unknown_variables(environ: Mapping[str, str] | None = None) -> list[str]:
    """One warning line per ``MNEMO_*`` variable that is no setting, naming the closest one."""
    known = [name.upper() for name in Settings.model_fields]
    lines = []
    for name in sorted(os.environ if environ is None else environ):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or upper[len(ENV_PREFIX) :] in known or upper in NOT_SETTINGS:
            continue
        if upper.startswith(NOT_SETTINGS_PREFIXES):
            continue
        close = difflib.get_close_matches(upper[len(ENV_PREFIX) :], known, n=1, cutoff=0.6)
        hint = f"; did you mean {ENV_PREFIX}{close[0]}?" if close else " (docs/configuration.md lists the settings)"
        lines.append(f"mnemo: warning: {name} is not a Mnemo setting and is ignored{hint}")
    return lines


def split_list(value: str) -> list[str]:
    """A comma-separated setting as its non-empty items."""
    return [item.strip() for item in value.split(",") if item.strip()]


# ``key`` is re-declared below as a secret (never in a repr); pydantic warns of any re-declaration
warnings.filterwarnings("ignore", message='Field name "key" in "Settings" shadows', category=UserWarning)


class Settings(BaseModel, ClientSettings):
    model_config = ConfigDict(extra="ignore", validate_default=True, defer_build=True)

    def __init__(self, **values: Any) -> None:
        super().__init__(**{**environment(), **values})

    #: where memories live: ``sqlite`` (one file in ``data_dir``) or ``aws`` (DynamoDB + OpenSearch)
    backend: Literal["sqlite", "aws"] = "sqlite"
    #: the embedded backend's folder (SQLite file ``mnemo.db`` inside)
    data_dir: Path = Path(".mnemo")

    #: default per-workspace limits (docs/contract.md §5); a workspace may carry its own
    search_per_minute: int = Field(default=120, ge=1)
    write_per_minute: int = Field(default=60, ge=1)

    #: the embedder of meaning (mnemo.embedding): ``auto`` (``minilm`` when its extra is installed,
    #: else ``static``; docs/retrieval.md says why), ``static`` (the packaged WordLlama model),
    #: ``minilm`` (all-MiniLM-L6-v2 on the CPU), ``openai`` (an OpenAI-compatible endpoint),
    #: ``bedrock`` (Amazon Bedrock), ``none`` (words only) or ``module:callable`` (a factory of the
    #: deployment's own)
    embedder: str = "auto"
    #: ``openai``: the endpoint's base URL (``…/v1``), model, and key (``MNEMO_OPENAI_API_KEY``; never
    #: logged or shown); Ollama, vLLM and TEI serve the same ``/v1/embeddings``
    openai_base_url: str = "https://api.openai.com/v1"
    openai_model: str = "text-embedding-3-small"
    openai_api_key: SecretStr | None = None
    #: ``bedrock``: ``amazon.titan-embed-text-v2:0`` or ``cohere.embed-multilingual-v3``
    bedrock_model: Literal["amazon.titan-embed-text-v2:0", "cohere.embed-multilingual-v3"] = (
        "amazon.titan-embed-text-v2:0"
    )
    #: vector size asked of a remote embedder that can cut it (openai's text-embedding-3, Titan V2:
    #: 256, 512 or 1024); None = the model's own
    embedder_dimensions: int | None = Field(default=None, ge=1, le=8192)
    #: one remote embedding request's timeout (a write waits at most this for its vector)
    embedder_timeout_s: float = Field(default=5.0, gt=0, le=60)
    #: texts in one request to a remote embedder
    embedder_batch: int = Field(default=64, ge=1, le=2048)

    #: bodies above this are 413 (docs/contract.md §4)
    max_body_bytes: int = 64 * 1024

    # -- the AWS backend (DynamoDB + OpenSearch); template.yaml sets these in Lambda ---------
    #: region for DynamoDB and SigV4 signing; None = boto3's own resolution (AWS_REGION …)
    aws_region: str | None = None
    #: e.g. a moto server or DynamoDB Local; None = the regional AWS endpoint
    dynamodb_endpoint_url: str | None = None
    #: the DynamoDB tables (template.yaml names them per stack)
    memories_table: str = "mnemo-memories"
    tenants_table: str = "mnemo-tenants"
    rate_table: str = "mnemo-rate-limits"
    idempotency_table: str = "mnemo-idempotency"
    #: seconds a process remembers a workspace (its limits) or project it read; 0 = never
    tenant_cache_s: float = Field(default=5.0, ge=0)
    #: create the tables (from template.yaml's key schemas) when missing — local use only
    aws_create_tables: bool = False
    #: the OpenSearch node or Amazon OpenSearch Service domain
    opensearch_endpoint: str = "http://127.0.0.1:9200"
    #: the alias every read and write goes through; the index behind it is ``<alias>-v1``
    opensearch_index: str = "mnemo-memories"
    #: the ``refresh`` of the index's own writes (the stream indexer's, the cleanup job's): no
    #: request waits for them, searches merge what the index does not show yet (docs/aws.md);
    #: the tests use ``wait_for`` so that what they drain is searchable when they look
    opensearch_refresh: Literal["wait_for", "true", "false"] = "false"
    #: the index's refresh_interval, set explicitly so an idle shard keeps refreshing
    opensearch_refresh_interval: str = "1s"
    #: sign requests with SigV4 (Amazon OpenSearch Service); needs a region
    opensearch_sigv4: bool = False
    #: one OpenSearch request's timeout
    opensearch_timeout_s: float = Field(default=5.0, gt=0)
    #: the primary shards and replicas of an index created here
    opensearch_shards: int = Field(default=1, ge=1)
    opensearch_replicas: int = Field(default=0, ge=0)
    #: the vector layout of an index created here: ``hnsw`` (Lucene HNSW graph, ``knn`` queries)
    #: or ``exact`` (``script_score`` over the filtered candidates); an existing index keeps its
    #: own until ``python -m mnemo.backends.aws.reindex`` moves it (docs/operations.md)
    opensearch_vectors: Literal["hnsw", "exact"] = "hnsw"
    #: each search also reads the project's changes of this many seconds from DynamoDB and merges
    #: them into the index's hits, so a change is searchable before the index has it (0: off)
    search_recent_window_s: float = Field(default=60.0, ge=0, le=3600)
    #: how many of those changes the one ``Query`` of a search asks for; more pages only when a
    #: burst of changes overflows it
    search_recent_page: int = Field(default=50, ge=1, le=1000)

    # -- OAuth 2.1 resource server (docs/auth.md); off while ``oauth_issuers`` is empty ---------
    #: the authorization servers whose access tokens this deployment accepts, comma-separated
    #: issuer URLs exactly as their tokens' ``iss`` claim spells them
    oauth_issuers: str = ""
    #: this deployment's public base URL (``https://mnemo.example.com``): a token's ``aud`` must be
    #: it or its MCP endpoint (``<url>/mcp``), RFC 8707; the protected-resource metadata names it
    oauth_resource: str = ""
    #: further accepted audiences, comma-separated (an IdP that puts its client's id in ``aud``)
    oauth_audiences: str = ""
    #: for issuers whose access tokens carry no ``aud`` (Amazon Cognito): such a token is accepted only
    #: when its ``client_id`` is one of these app clients, comma-separated, and ``token_use`` is ``access``
    oauth_client_ids: str = ""
    #: the issuers' key set; empty: discovered from each issuer's metadata (OIDC discovery, RFC 8414)
    oauth_jwks_url: str = ""
    #: signature algorithms accepted, comma-separated; asymmetric ones only (never ``none`` or HMAC)
    oauth_algorithms: str = "RS256,RS384,RS512,PS256,PS384,PS512,ES256,ES384,ES512,EdDSA"
    #: what a token's scopes carry before Mnemo's names (Cognito resource servers: ``<identifier>/``)
    oauth_scope_prefix: str = ""
    #: claims whose values (a string or a list of strings) name the token's groups, comma-separated
    oauth_group_claims: str = ""
    #: the clock skew allowed on ``exp``, ``nbf`` and ``iat``
    oauth_leeway_s: int = Field(default=30, ge=0, le=300)
    #: a token longer than this is refused without being decoded
    oauth_max_token_bytes: int = Field(default=8192, ge=512, le=65536)
    #: the time one fetch of metadata or keys may take; past it the call answers 503
    oauth_fetch_timeout_s: float = Field(default=3.0, gt=0, le=30)
    #: how long fetched keys are trusted before they are fetched again
    oauth_jwks_ttl_s: float = Field(default=3600.0, ge=0)
    #: the least time between two fetches of an issuer's keys (an unknown ``kid`` asks for one)
    oauth_jwks_min_refresh_s: float = Field(default=30.0, ge=0)

    # -- background jobs (mnemo.service.cleanup, mnemo.service.indexer) ---------------------
    #: items one cleanup run may examine (the deadline, from Lambda's remaining time, also bounds it)
    cleanup_max_items: int = Field(default=5000, ge=1)
    #: items one page of a cleanup run reads
    cleanup_page_size: int = Field(default=100, ge=1, le=1000)
    #: how long delete tombstones stay in the index; well beyond OpenSearch's 60 s gc_deletes and
    #: the stream indexer's verification age, so no late write can resurrect a deleted memory
    cleanup_tombstone_retention_s: int = Field(default=600, ge=120)
    #: ``mnemo serve`` runs the cleanup job at start and then every this many seconds, as the
    #: stack's schedule does on AWS (template.yaml: every 15 minutes); 0: only ``mnemo cleanup``
    local_cleanup_interval_s: int = Field(default=900, ge=0)
    #: stream changes older than this are checked against the store before they are indexed
    indexer_verify_after_s: int = Field(default=300, ge=1)

    # -- browsers and host names (api/origin.py) -------------------------------------------
    #: origins (comma-separated) allowed to call from a browser besides loopback and the API's
    #: own (template.yaml's CorsAllowOrigins); see api/origin.py
    allowed_origins: str = ""

    #: host names (comma-separated) this server answers to besides loopback names, IP addresses
    #: and the API's own domain: ``mnemo serve --host 0.0.0.0`` reached by a name; see api/origin.py
    allowed_hosts: str = ""

    # -- the local server and the CLI ----------------------------------------------------------
    #: ``mnemo serve``'s port (``--port`` wins); 0 picks a free one
    port: int = 8787
    #: the admin key of a new, empty store (``mnemo serve``, ``mnemo mcp``; at least 16 characters);
    #: None = a generated one, printed once
    bootstrap_key: SecretStr | None = None
    #: the workspace of a CLI command without ``--workspace``; None = the store's only one
    workspace: str | None = None
    #: the ``mnemo hook`` client's key (:mod:`mnemo.clientconfig`), here never shown in a repr
    key: SecretStr | None = None  # type: ignore[assignment]

    @field_validator("bootstrap_key", "workspace", "key", "project", "hook_state_dir", "hook_deadline_s", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: Any) -> Any:
        """``MNEMO_BOOTSTRAP_KEY=`` (set, empty) means unset, as it did when read by hand."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("port", mode="before")
    @classmethod
    def _a_port_number(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return int(value.strip() or cls.model_fields["port"].default)
            except ValueError:
                raise ValueError(f"must be a port number, not {value!r}") from None
        return value

    @property
    def bootstrap_plain_key(self) -> str | None:
        return self.bootstrap_key.get_secret_value() if self.bootstrap_key is not None else None

    @property
    def origins(self) -> list[str]:
        return [o.strip() for o in self.allowed_origins.split(",") if o.strip()]

    @property
    def hosts(self) -> list[str]:
        return [h.strip() for h in self.allowed_hosts.split(",") if h.strip()]

    @property
    def oauth_enabled(self) -> bool:
        return bool(split_list(self.oauth_issuers))

    @property
    def sqlite_path(self) -> Path:
        return self.data_dir / "mnemo.db"
