"""A griffe extension for the docs site: Sphinx roles in docstrings become code spans.

The library's docstrings name other objects as Sphinx does (``:class:`Triple```,
``:func:`~s3kg_core.grapheval.detect.detect```); Markdown would show the role's text as it is.
mkdocs.yml loads this file (mkdocstrings, ``extensions``) so the API pages read
``Triple`` and ``detect`` instead, as ``~`` asks for the last part of a dotted name.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension

__all__ = ["ROLE", "SphinxRoles", "strip_roles"]

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|data|attr|mod|exc|obj|const):`(~?)([^`]+)`")


def strip_roles(text: str) -> str:
    """``text`` with every Sphinx role written as a Markdown code span.

    Examples
    --------
    >>> strip_roles("See :class:`Triple` and :func:`~s3kg_core.grapheval.detect.detect`.")
    'See `Triple` and `detect`.'
    """
    return ROLE.sub(lambda m: f"`{m[2].rsplit('.', 1)[-1] if m[1] else m[2]}`", text)


class SphinxRoles(Extension):
    """Rewrites the roles of every docstring griffe loads (modules, classes, functions...)."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        """Called by griffe for each object it loads."""
        if obj.docstring is not None:
            obj.docstring.value = strip_roles(obj.docstring.value)
