"""NLI-Set: long-text NLI generation with rubric review by an LLM judge."""
