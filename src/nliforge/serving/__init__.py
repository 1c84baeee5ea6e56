"""Serving engines nliforge starts and stops itself (vLLM's OpenAI-compatible server)."""
