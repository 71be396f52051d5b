"""What researchers read: the one comparisons builder, correlation (pure), tables, reports, exports,
the REST API and the report and export pages. Reads ``evaluation.metrics`` and ``evaluation.human``;
neither of them imports this package."""
