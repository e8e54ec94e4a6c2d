"""The PII test set: the shipped PII-rich sentences spoken by Kokoro voices, with their entity spans.

Layout under the output root::

    wav/pii/<spk>/<utt>.wav     16 kHz 16-bit mono (trimmed and levelled as the corpus)
    data/pii/                   Kaldi data dir: wav.scp, text, utt2spk, spk2gender, utt2dur, SYNTHETIC
    data/pii/entities.jsonl     per utterance: the sentence as spoken and its entities (type, character
                                span in it, word span [first, last + 1) in ``text``)

Each sentence is spoken by one English voice pack (US or UK), drawn by a hash of the seed and the
sentence id: the same seed and installed packs give the same files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from voxanon.data.kaldi import DataDir, write_data_dir
from voxanon.data.pii import load_pii_sentences, word_spans
from voxanon.jobs.corpus.build import SYNTHETIC_MARKER, render_jobs
from voxanon.jobs.corpus.kokoro_speakers import ENGINE, ENGLISH_PREFIXES, pack_gender
from voxanon.jobs.corpus.seeding import unit
from voxanon.jobs.corpus.sets import CorpusPlanError, UttJob

SET = "pii"
LICENCE = ("The sentences are resources/seca/pii_sentences.jsonl, written for voxanon and released under CC0 1.0; "
           "the people in them are fictional. Voices: Kokoro-82M v1.0 (Apache-2.0), kokoro-js 1.2.1 voice packs.\n")


def plan_pii(packs: list[str], seed: int) -> list[UttJob]:
    """One job per shipped sentence, each in an English pack drawn by ``unit(seed, "pii", id)``."""
    english = sorted(p for p in packs if p[0] in ENGLISH_PREFIXES)
    if not english:
        raise CorpusPlanError("no English Kokoro voice packs installed: run tools/setup.sh")
    jobs = []
    for s in load_pii_sentences():
        pack = english[int(unit(seed, "pii", s.id) * len(english))]
        jobs.append(UttJob(f"{pack}-{s.id}", pack, SET, ENGINE, pack, s.text, s.transcript, 1.0, 1.0, 1.0))
    return jobs


def build_pii_set(root: str | os.PathLike, *, seed: int = 0, jobs: int | None = None, quiet: bool = False,
                  packs: list[str] | None = None) -> Path:
    """Synthesise the PII test set under ``root`` (see the module docstring); returns its data directory."""
    from voxanon.models.tts.kokoro import available_voices

    root = Path(root).resolve()
    todo = plan_pii(list(available_voices()) if packs is None else packs, seed)
    durations = render_jobs(todo, root, jobs or os.cpu_count() or 1, quiet)
    sentences = {s.id: s for s in load_pii_sentences()}
    data = DataDir(
        wav_scp={j.utt: str(root / j.relpath) for j in todo}, utt2spk={j.utt: j.spk for j in todo},
        spk2gender={j.spk: pack_gender(j.spk) for j in todo}, text={j.utt: j.transcript for j in todo},
        utt2dur={j.utt: f"{durations[j.utt]:.4f}" for j in todo})
    out = write_data_dir(data, root / "data" / SET)
    (out / "SYNTHETIC").write_text(SYNTHETIC_MARKER + LICENCE, encoding="utf-8")
    with open(out / "entities.jsonl", "w", encoding="utf-8") as f:
        for j in todo:
            s = sentences[j.utt.split("-", 1)[1]]
            ents = [{"type": e.type, "start": e.start, "end": e.end, "words": w["words"]}
                    for e, w in zip(s.entities, word_spans(s.text, s.entities))]
            f.write(json.dumps({"utt": j.utt, "text": s.text, "entities": ents}) + "\n")
    return out
