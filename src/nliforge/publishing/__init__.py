"""nliforge-publish: a run's set in the Hugging Face Hub's dataset layout (data/*.parquet per split and a
README.md card with provenance), uploaded with huggingface_hub unless dry_run."""
