"""A small emotion corpus: 5 folds of two speakers, each emotion class a distinct prosodic style."""

from __future__ import annotations

from voxanon.audio.io import write_wav
from voxanon.audio.synthetic import speech_like
from voxanon.data.iemocap import EMOTIONS
from voxanon.data.kaldi import DataDir, write_data_dir

SR = 16000
#: class → (F0 factor, peak amplitude, voiced fraction): separable prosodic styles
STYLES = {"neu": (1.0, 0.25, 0.8), "sad": (0.75, 0.06, 0.5), "ang": (1.35, 0.9, 0.95), "hap": (1.7, 0.5, 0.9)}


def make_emotion_corpus(path, *, per_class=4, folds=5, duration=1.0):
    """Speakers ``S<k>F``/``S<k>M`` in fold k; each class a distinct prosodic style."""
    data = DataDir()
    for fold in range(1, folds + 1):
        for gender, base in (("F", 210.0), ("M", 115.0)):
            spk = f"S{fold}{gender}"
            data.spk2gender[spk], data.spk2fold[spk] = gender.lower(), str(fold)
            for emo, (f0, amp, voiced) in STYLES.items():
                for i in range(per_class):
                    utt = f"{spk}_{emo}_{i}"
                    seed = fold * 1000 + (gender == "M") * 500 + EMOTIONS.index(emo) * 10 + i
                    wav = speech_like(duration, SR, f0=base * f0 * (1 + 0.05 * fold), voiced_fraction=voiced,
                                      seed=seed) * (amp / 0.5)
                    write_wav(path / "wav" / f"{utt}.wav", wav, SR)
                    data.wav_scp[utt] = str(path / "wav" / f"{utt}.wav")
                    data.utt2spk[utt], data.utt2emo[utt] = spk, emo
    write_data_dir(data, path)
    return path
