"""Test and benchmark support that ships with the package (a local OpenAI-compatible server)."""
