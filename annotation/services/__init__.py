"""Writes of the annotation app. Each service runs in a transaction and raises DomainError."""
