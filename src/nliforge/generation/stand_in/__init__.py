"""The offline stand-in endpoint: a local OpenAI-compatible server (`server.py`, run as
`python -m nliforge.generation.stand_in.server`) answering from deterministic responders
(`responders.py`), on a server thread (`threaded.py`). The long-text demo generates and judges with it when no
real LLM is chosen; the tests use it to inject rate limits, faults and timeouts."""
