"""The one place that talks to OpenAI-compatible endpoints, and the local models."""
