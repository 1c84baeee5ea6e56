"""The shared core of the generation pipelines: stages and pipeline declarations, the registry of
pipelines (entry points), the run folder, the engine that runs a pipeline's stages, the shared stages and
the stand-in generator choice."""
