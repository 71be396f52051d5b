"""The demo's simulated side-by-side set: systems, references, raters, finished campaigns and metric runs.

``captions`` (the text) and ``simulation`` (the raters' model) are plain data and plain functions;
``services`` writes them through the platform's own services.
"""
