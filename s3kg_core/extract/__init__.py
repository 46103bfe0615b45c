"""KG extraction: the interface, the LLM extractor and the offline (spaCy) extractor."""

from .base import SOURCES, Extractor, ItemTexts, TextKG

__all__ = ["SOURCES", "Extractor", "ItemTexts", "TextKG"]
