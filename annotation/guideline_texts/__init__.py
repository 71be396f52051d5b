"""The built-in annotator guidelines in the interface languages other than English.

Each module holds the four texts of ``annotation.guidelines`` (rating, verification, side by
side, writing), translated from the English ones, which follow seed paper 000's appendices B and
C. The scale labels in them are the ones the buttons show in that language (the ``rating`` and
``side by side`` entries of the language's catalogue) and the keys come from ``core.scales``:
tests/annotation/test_interface_language.py checks both.
"""
