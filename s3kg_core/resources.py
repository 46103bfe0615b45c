"""Files that ship inside the installed packages, as paths on disk.

The demo set, the dashboard's app, pages and assets, and pyvis's copy of vis-network are read
through :mod:`importlib.resources`, so a checkout and an installed wheel find them the same way.
In the repository the package folders link to the files at their places in the repository
(``s3kg_core/demo_data`` -> ``data/demo``, ``dashboard/app.py`` -> ``app.py``,
``dashboard/pages`` -> ``pages``); a wheel carries copies at those places.

Streamlit runs files and DuckDB reads them, so a resource must be a file on disk: a package
imported from a zip archive is refused with a message, not extracted to a temporary folder.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .errors import InstallError

__all__ = ["package_path"]


def package_path(package: str, *parts: str) -> Path:
    """The file or folder ``parts`` inside the installed ``package``, as a path on disk.

    The path need not exist (the caller says what is missing when it reads it).

    Parameters
    ----------
    package
        An importable package (``"s3kg_core"``, ``"dashboard"``, ``"pyvis"``).
    parts
        The path inside the package, one component per argument.

    Raises
    ------
    InstallError
        If the package is not installed, or not as files on disk.

    Examples
    --------
    >>> package_path("s3kg_core", "demo_data", "questions.jsonl").is_file()
    True
    >>> package_path("no_such_package_here")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.InstallError: the package no_such_package_here is not installed
    """
    try:
        root = resources.files(package)
    except ModuleNotFoundError as exc:
        raise InstallError(f"the package {package} is not installed") from exc
    target = root.joinpath(*parts)
    if not isinstance(target, Path):
        raise InstallError(
            f"{package} is installed inside an archive ({target}); install it as files "
            "(pip install unpacks wheels) to read its data"
        )
    return target
