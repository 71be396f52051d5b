"""Research reports: metric-vs-human correlations with their scatter plots and the human tables.

* :mod:`.comparisons`: reads the database into the plain inputs of :mod:`evaluation.research.correlation`:
  model-level comparisons (side-by-side campaigns and metric runs) and per-caption rows (metric
  scores against the screen-1 ratings of the same captions);
* :mod:`.plots`: scatter plots of ΔS×S against each Δmetric, pure over comparisons (matplotlib,
  no GUI backend);
* :mod:`.report`: assembles a report (correlations, Tables 1 and 2, side-by-side rows, per-caption
  agreement); :mod:`.render` shows it and writes its files. Used by ``manage.py report`` and the
  ``/reports/`` page.
"""
