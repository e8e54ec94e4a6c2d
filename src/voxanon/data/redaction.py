"""Reference transcripts of content-anonymized audio: the replaced entities' words swapped in the text too."""

from __future__ import annotations

import difflib

from voxanon.data.sentences import normalize_transcript


def redact_reference(reference: str, transcript: list[str], replaced: list[tuple[int, int]]) -> str:
    """``reference`` with the words aligned to ``transcript[a:b]`` (each ``(a, b)`` of ``replaced``) swapped for them.

    ``transcript`` is the anonymized recognised transcript (normalised words, replacements included) and
    ``replaced`` the word ranges of the replacements in it. Reference and transcript are aligned word by
    word (difflib); a stretch where they differ takes the transcript's words when it touches a replacement
    (only the replaced ones when the stretch has as many words on both sides),
    so an entity the recogniser misheard is replaced all the same. Everywhere else the reference is kept.
    """
    ref = normalize_transcript(reference).split()
    hyp = [w.upper() for w in transcript]
    inside = set().union(*(range(a, b) for a, b in replaced)) if replaced else set()
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ref, hyp, autojunk=False).get_opcodes():
        if op == "equal" or not any(j in inside for j in range(j1, j2)):
            out += ref[i1:i2]
        elif i2 - i1 == j2 - j1:  # word for word: only the replaced words change
            out += [hyp[j] if j in inside else ref[i] for i, j in zip(range(i1, i2), range(j1, j2))]
        else:
            out += hyp[j1:j2]
    return " ".join(out)
