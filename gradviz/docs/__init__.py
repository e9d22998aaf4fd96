"""Diagrams in docs without copying files: the `gradviz` fence and directive.

One fence renderer (`gradviz.docs.fence`: a command line as typed after `gradviz`, and
its options, in; an HTML fragment or a `FenceError` with its line out) and two front ends
at the edge, each importing its docs tool only when that tool loads it:
`gradviz.docs.mkdocs` (a SuperFences custom fence and an MkDocs plugin) and
`gradviz.docs.sphinx` (a Sphinx extension with a `gradviz` directive, MyST too).
`import gradviz` never imports this package.
"""
