"""`python -m gradviz` runs the command-line tool."""

from gradviz.cli import main

main()
