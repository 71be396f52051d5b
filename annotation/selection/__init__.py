"""Geographically diverse image selection per language (seed 000, sec. 2.2).

``algorithm`` is the pure greedy selection; ``geography`` derives places from coordinates and
where languages are spoken, offline; ``figures`` draws the map. The Django side (models, the
service that feeds and stores them) is ``annotation.services.selection``.
"""
