"""Benchmarks for Mnemo: ``python -m bench.run`` (``make bench``) writes ``bench/results/latest.md``.

Each module measures one thing and returns plain dicts; ``bench.run`` orchestrates them and
renders the report. Nothing here is imported by the service or the tests.
"""
