"""Writes of the evaluation app: reference sets, metric runs and their chunks, the embedding cache."""
