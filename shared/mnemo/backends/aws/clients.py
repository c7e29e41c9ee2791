"""The boto3 DynamoDB client and the OpenSearch client, built once per process from the settings
(``AwsBackend.from_settings``) and injected into the adapters; tests pass their own."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from mnemo.config import Settings


#: botocore's loader of its JSON data (the DynamoDB model, endpoints, retry rules), shared by every
#: session of the process: a fresh session reads and parses those files again, 0.1-0.2 s of CPU a
#: client (boto3.session.Session() per client: the sessions stay apart, as boto3 advises for threads)
_DATA_LOADER: Any = None


def _session() -> Any:
    import boto3
    import botocore.session

    global _DATA_LOADER
    core = botocore.session.get_session()
    if _DATA_LOADER is None:
        _DATA_LOADER = core.get_component("data_loader")
    else:
        core.register_component("data_loader", _DATA_LOADER)
    return boto3.session.Session(botocore_session=core)


def dynamodb_client(cfg: Settings) -> Any:
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "max_attempts": 3},
        connect_timeout=2,
        read_timeout=5,
        max_pool_connections=32,
    )
    return _session().client(
        "dynamodb", region_name=cfg.aws_region, endpoint_url=cfg.dynamodb_endpoint_url, config=config
    )


def opensearch_client(cfg: Settings) -> OpenSearch:
    import logging
    from urllib.parse import urlsplit

    from opensearchpy import OpenSearch, Urllib3HttpConnection

    url = urlsplit(cfg.opensearch_endpoint)
    tls = url.scheme == "https"
    auth = None
    if cfg.opensearch_sigv4:
        import boto3
        from opensearchpy import Urllib3AWSV4SignerAuth

        session = boto3.session.Session(region_name=cfg.aws_region)
        auth = Urllib3AWSV4SignerAuth(session.get_credentials(), session.region_name, "es")
    # opensearch-py logs every failed request at WARNING; the index adapter turns each failure
    # into an outage or an error that is logged once, with its cause, where it is handled
    logging.getLogger("opensearch").setLevel(logging.ERROR)
    return OpenSearch(
        hosts=[{"host": url.hostname, "port": url.port or (443 if tls else 80)}],
        http_auth=auth,
        use_ssl=tls,
        verify_certs=tls,
        connection_class=Urllib3HttpConnection,
        timeout=cfg.opensearch_timeout_s,
        max_retries=1,
        retry_on_timeout=False,
        http_compress=True,
        pool_maxsize=32,
    )
