"""The assignment engine: a pure choice (``choice``) and the locked services around it (``engine``)."""
