"""The tests' name for :mod:`s3kg_core.llm.fault_server` (the scripted OpenAI-compatible server)."""

from s3kg_core.llm.fault_server import FakeOpenAI, Reply, fake_openai, last_user_message

__all__ = ["FakeOpenAI", "Reply", "fake_openai", "last_user_message"]
