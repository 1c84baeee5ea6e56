"""Review (stage 4): the human review page, crowd export/import, teacher and LLM review,
two-annotator aggregation with agreement, and rubric scores for long texts."""
