"""The one job engine every background job runs on (see ``docs/jobs.md``).

``models``: abstract ``Job``/``ChunkedJob``/``SingleUnitJob`` and ``WorkUnit``, the one orphan rule;
``kinds``: what a kind registers; ``engine``: claim, heartbeat, release, fail, store, finalise, send,
resume, sweep; ``tasks``: the Celery task base, the unit-task factory and the beat's sweep; ``admin``:
the admin mixins. It imports no app: each kind registers itself from its own ``tasks`` module.
"""
