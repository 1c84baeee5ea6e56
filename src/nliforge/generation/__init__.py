"""LLM generation: backends, prompt builders, the exactly-once async runner with its cache, parsers."""
