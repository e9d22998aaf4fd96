"""The maintainers' tools, run from the repository's root with `python -m tools.<name>`
(`make samples`): they regenerate docs/ and are not shipped in the package."""
