"""`python -m societas.cluster.cli`: the same command line as the `societas` script."""

from societas.cluster.cli.commands import main

main()
