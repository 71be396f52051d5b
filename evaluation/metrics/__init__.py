"""Automatic metrics: tokenisation and the text metrics (``text``, pure), CLIPScore (``clip``), and the
metric runs that compute them as chunked Celery jobs (``runs``, ``chunks``, ``tasks``, ``references``)."""
