"""The tools' behaviour, written once against the ports in ``mnemo.ports``."""
