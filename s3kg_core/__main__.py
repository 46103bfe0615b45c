"""``python -m s3kg_core``: the same as the ``s3kg`` command."""

from .cli import main

main()
