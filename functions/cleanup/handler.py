"""Scheduled cleanup (EventBridge schedule): one bounded run of the cleanup job, ending well
before the invocation's timeout; the next run resumes where this one stopped. Each run first makes
sure the index exists (created, with its primary shards started, when missing): invoked once after
deploying, it creates a new deployment's index before traffic (docs/aws.md, "The index before
traffic")."""

import contextlib

from mnemo import coldstart  # first: no garbage collection while the function loads (until done() below)

# isort: split
from aws_lambda_powertools.utilities.typing import LambdaContext
from mnemo import runtime
from mnemo.errors import IndexUnavailable
from mnemo.observability import contain_errors, logger, metrics, tracer
from mnemo.service import cleanup


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False, capture_error=False)
@metrics.log_metrics
@contain_errors
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    deadline = cleanup.deadline_from_remaining(context.get_remaining_time_in_millis())
    options = cleanup.CleanupOptions.from_settings(runtime.settings(), deadline=deadline)
    svc = runtime.service()
    ports = svc.ports
    # (once per process on AWS: one HEAD of the alias; an index down still lets the run do its
    # store's work, and its index steps report the outage)
    with contextlib.suppress(IndexUnavailable):
        ports.index.ensure()
    summary = cleanup.run_cleanup(ports, options, embedder=svc.embedder)
    cleanup.publish_metrics(summary, metrics)
    return summary.as_dict()


coldstart.done()
