"""``python -m s3kg_core``: the same as the ``s3kg`` command."""

from .cli import main

if __name__ == "__main__":  # worker processes re-import this module and must not run the CLI
    main()
