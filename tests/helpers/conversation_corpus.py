"""A source corpus shaped like ``voxanon data synth``'s (dev/test enrollment and trial sets) made of speech-like
speakers that differ in F0 and formants, and its conversation corpus."""

from __future__ import annotations

from voxanon.audio.io import write_wav
from voxanon.audio.synthetic import speech_like
from voxanon.data.kaldi import DataDir, write_data_dir


def make_source_corpus(root, n_spk=8, n_utt=5, dur=1.3):
    """``root/data/dev_enrolls`` and ``root/data/dev_trials_{f,m}``: ``n_spk`` speakers (even: f, odd: m) with
    ``n_utt`` utterances each (one in enrolls, the rest in the trial set of their gender), words in ``text``."""
    sets = {name: DataDir() for name in ("dev_enrolls", "dev_trials_f", "dev_trials_m")}
    for s in range(n_spk):
        spk, gender = f"spk{s}", "fm"[s % 2]
        f0 = (190 if gender == "f" else 100) + 12 * s
        formants = ((450 + 60 * s, 80), (1300 + 150 * s, 100), (2400 + 90 * s, 120))
        for u in range(n_utt):
            utt = f"{spk}-u{u}"
            seconds = dur + 0.1 * (u % 3)
            path = root / "wav" / spk / f"{utt}.wav"
            write_wav(path, speech_like(seconds, f0=f0, formants=formants, seed=100 * s + u), 16000)
            d = sets["dev_enrolls" if u == 0 else f"dev_trials_{gender}"]
            d.wav_scp[utt], d.utt2spk[utt], d.text[utt] = str(path), spk, f"word{s} says number {u}"
            d.utt2dur[utt], d.spk2gender[spk] = f"{seconds:.3f}", gender
    for name, d in sets.items():
        write_data_dir(d, root / "data" / name)
    return root
