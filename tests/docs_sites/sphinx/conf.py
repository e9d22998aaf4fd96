# A sample Sphinx project with the gradviz directive, in reStructuredText and in MyST
# Markdown (tests/test_docs_sites.py builds it offline).
project = "gradviz directive sample"
extensions = ["myst_parser", "gradviz.docs.sphinx"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
html_theme = "alabaster"
