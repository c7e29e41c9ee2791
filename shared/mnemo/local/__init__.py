"""Running Mnemo on one machine: the local HTTP server and the ``mnemo`` CLI."""
