"""``voxanon benchmark``, the main job: anonymize with every system, run every evaluator, rank, report."""
