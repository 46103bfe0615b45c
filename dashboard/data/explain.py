"""Answers explained again from the stored vectors: the explorer's case, the encoder, warm-up.

The Sample explorer, the Failure analysis, Annotate and the Run comparison explain answers from
the embeddings ``s3kg score`` stored; the signature's encoder is loaded once per process and
only asked for the strings the file does not hold.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import streamlit as st

from dashboard.data import background
from dashboard.data.database import View, by_results, read_store, reader
from dashboard.data.reads import item_view
from dashboard.explorer import CaseScores, case_scores
from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.normalize import load_lemmatizer
from s3kg_core.scoring.s3kg import KGScorer, S3KGConfig
from s3kg_core.scoring.signature import Signature
from s3kg_core.stages.scored import encoder_for
from s3kg_core.store import queries

__all__ = ["encoder", "encoder_of", "explorer_case", "fill_stored", "warm_up"]


@by_results()
@st.cache_data(show_spinner=False, max_entries=8)
def encoder_of(view: View) -> str:
    """How to load the encoder of ``view``'s signature (recorded by ``s3kg score``)."""
    with read_store(view.path) as store:
        return encoder_for(store, view.scored)


@st.cache_resource(show_spinner=False)
def _encoder(name: str) -> Any:
    return load_encoder(name)


def encoder(view: View) -> Any:
    """The encoder of ``view``'s signature, loaded once per process."""
    return _encoder(encoder_of(view))


def fill_stored(path: Path, cache: Any, texts: Iterable[str]) -> None:
    """Put the stored vectors of ``texts`` (those the file has) into an embedding cache.

    Which strings a computation needs is the library's to say
    (:meth:`KGScorer.strings_needed <s3kg_core.scoring.s3kg.KGScorer.strings_needed>`,
    :meth:`TripletAnalyzer.strings_needed <s3kg_core.scoring.tau.TripletAnalyzer.strings_needed>`).
    """
    with reader(path) as con:
        cache.update(queries.embeddings_of(con, cache.encoder.name, texts))


@by_results()
@st.cache_data(show_spinner=False, max_entries=128)
def explorer_case(view: View, run_id: int, item_id: int, tau: float) -> CaseScores:
    """One answer explained again at ``tau`` from the stored embeddings, with its triple table.

    ``view``'s signature gives the mode, K and normalisation; the scorer says which strings it
    needs (:meth:`~s3kg_core.scoring.s3kg.KGScorer.strings_needed`: sentences, labels and, in
    ``text`` mode, the texts), and the encoder is only ever asked for those the database does
    not hold (``CaseScores.encoded`` says how many: 0 for a question scored by ``s3kg score``),
    so moving tau never loads a model.
    """
    answer = item_view(view, run_id, item_id)
    kgs = {
        s: (answer.kgs[s].triples if s in answer.kgs else ()) for s in ("answer", "gold", "context")
    }
    config = Signature.parse(view.scored).config_kwargs()
    config["tau"] = float(tau)
    enc = encoder(view)
    scorer = KGScorer(enc, S3KGConfig(**config), cache=EmbeddingCache(enc))
    needs = scorer.strings_needed(
        [(kgs["answer"], kgs["gold"]), (kgs["answer"], kgs["context"])],
        texts=[(answer.answer, answer.gold), (answer.answer, answer.context)],
    )
    fill_stored(view.path, scorer.cache, needs)
    return case_scores(
        scorer,
        kgs["answer"],
        kgs["gold"],
        kgs["context"],
        texts=(answer.answer, answer.gold, answer.context),
    )


def _load_lemmatizer(stopped: Callable[[], bool]) -> bool:
    load_lemmatizer()
    return True


def warm_up() -> threading.Thread:
    """Load what the first explained answer needs, once per process, in a background thread.

    The lemmatiser's dictionary (:func:`s3kg_core.normalize.load_lemmatizer`, 0.4 s) is read
    while the reader looks at the first page drawn, not when the Sample explorer, the Failure
    analysis or the Run comparison first explains an answer. ``app.py`` calls it after every
    page; only the first call starts the thread. Returns the thread.
    """
    return background.start("warm-up", _load_lemmatizer, group="warm-up")
