"""A shipped voice anonymizer on the three held-out LibriVox clips: does it keep the words and change the voice?"""

from __future__ import annotations

import numpy as np
import soundfile as sf

from tests.helpers.audio import LIBRIVOX

CLIPS = sorted((LIBRIVOX).glob("*.flac"))


def words_and_voice(anon) -> tuple[float, float, list[str]]:
    """Whisper tiny.en WER (%) of ``anon``'s outputs, GE2E cosine of their mean embedding to the sources' and
    the transcripts; checks each output's rate, length and level on the way."""
    from voxanon.jobs.benchmark.run import WER_NORMALIZATION
    from voxanon.metrics.wer import wer
    from voxanon.models.asr import load_asr
    from voxanon.models.speaker import load_encoder

    texts = dict(line.split(" ", 1) for line in (CLIPS[0].parent / "text").read_text().splitlines())
    wavs = [sf.read(c, dtype="float32")[0] for c in CLIPS]
    outs = [anon.anonymize(w, 16000, np.random.default_rng(0)) for w in wavs]
    assert all(sr == 16000 and y.shape == w.shape and np.isfinite(y).all() and np.abs(y).max() > 0.01
               for (y, sr), w in zip(outs, wavs))
    hyps = load_asr("whisper-tiny").transcribe([y for y, _ in outs], 16000)
    src, anonymized = (load_encoder("ge2e").embed(x, 16000).mean(0) for x in (wavs, [y for y, _ in outs]))
    cos = float(src @ anonymized / np.linalg.norm(src) / np.linalg.norm(anonymized))
    return wer([texts[c.stem] for c in CLIPS], hyps, WER_NORMALIZATION).wer, cos, hyps
