"""Escaping of user- and model-provided strings for each place the dashboard shows text.

Names of models, datasets, extractors, checkers and annotators, question texts and triple
labels come from files, flags and LLMs: the dashboard shows them as typed. Streamlit renders
Markdown (with its own directives, LaTeX and emoji) in ``st.markdown``, captions, alerts,
metric labels and values, help tooltips, expander and tab labels, and plotly renders a subset
of HTML (``<b>``, ``<a href>``, ``<br>``, ...) in trace names, ticks, titles and hovers. Every
such sink takes its untrusted parts through one of these functions:

* :func:`md` for Markdown text,
* :func:`code` for an inline code span (a path, a command line, a signature) (both from
  :mod:`s3kg_core.escape`, which the library's Markdown outputs use too),
* :func:`plotly_text` for any plotly label or hover, and :func:`plotly_frame` for the string
  columns of a frame handed to ``plotly.express``.

Widgets whose options are plain text (select boxes, radio options), ``st.text``,
``st.dataframe`` and ``st.code`` need no escaping.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

import pandas as pd

from s3kg_core.escape import code, md

__all__ = ["code", "md", "plotly_frame", "plotly_text"]


def plotly_text(text: object) -> str:
    """``text`` for a plotly label, tick, title or hover: ``&``, ``<``, ``>`` as entities.

    Plotly draws the entities as the characters, so the label reads as typed, and no tag of
    the text is rendered.

    Examples
    --------
    >>> plotly_text("<b>R&D</b>")
    '&lt;b&gt;R&amp;D&lt;/b&gt;'
    """
    return html.escape(str(text), quote=False)


def plotly_frame(frame: pd.DataFrame, columns: Iterable[str] | None = None) -> pd.DataFrame:
    """A copy of ``frame`` whose text columns (or ``columns``) hold :func:`plotly_text` values.

    For the frames handed to ``plotly.express``: their values become trace names, ticks,
    facet titles and hover text.

    Examples
    --------
    >>> plotly_frame(pd.DataFrame({"model": ["<b>m</b>"], "n": [1]})).to_dict("records")
    [{'model': '&lt;b&gt;m&lt;/b&gt;', 'n': 1}]
    """
    out = frame.copy()
    chosen = (
        list(columns)
        if columns is not None
        else [
            c
            for c in out.columns
            if pd.api.types.is_object_dtype(out[c]) or pd.api.types.is_string_dtype(out[c])
        ]
    )
    for column in chosen:
        out[column] = out[column].map(lambda v: v if pd.isna(v) else plotly_text(v))
    return out
