"""Maintenance scripts run with `python -m gradviz.tools.<name>` (not part of the CLI)."""
