"""Rendering of results: the benchmark's CSV tables, figures and self-contained HTML report, the utility report."""
