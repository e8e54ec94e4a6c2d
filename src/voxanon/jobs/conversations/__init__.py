"""Conversation mode: every speaker of a multi-speaker recording anonymized with a pseudo-speaker of their own.

:mod:`.timeline` partitions a recording among its speakers, :mod:`.pseudo`
chooses pseudo-speakers that stay apart (and finds target speakers),
:mod:`.conversation` anonymizes one recording, :mod:`.sources` reads given
turns and speaker labels, :mod:`.method` runs it inside the corpus runner.
"""
