"""A small corpus of speech-like speakers that differ in F0 and formants, with enrollment and trial lists."""

from __future__ import annotations

from voxanon.audio.io import write_wav
from voxanon.audio.synthetic import speech_like
from voxanon.data.kaldi import DataDir
from voxanon.models.speaker.ecapa import EcapaConfig


def make_corpus(root, n_spk=6, n_utt=8, dur=1.2):
    """Speakers differ in F0 and formants; utterances of a speaker differ in content (seed)."""
    wav_scp, utt2spk = {}, {}
    for s in range(n_spk):
        f0 = 90 + 25 * s
        formants = ((450 + 60 * s, 80), (1300 + 150 * s, 100), (2400 + 90 * s, 120))
        for u in range(n_utt):
            utt = f"s{s}-u{u}"
            path = root / "wav" / f"{utt}.wav"
            write_wav(path, speech_like(dur + 0.1 * (u % 3), f0=f0, formants=formants, seed=100 * s + u), 16000)
            wav_scp[utt], utt2spk[utt] = str(path), f"s{s}"
    return DataDir(wav_scp=wav_scp, utt2spk=utt2spk, path=root)


def trial_dirs(root, data):
    """Enrollment (first 2 utterances per speaker) and one trial dir (the rest, every speaker x utterance)."""
    from voxanon.data.kaldi import Trial, write_data_dir

    spk2utt = data.spk2utt
    gender = {s: "f" if int(s[1:]) % 2 else "m" for s in spk2utt}
    enroll_utts = {u for s, us in spk2utt.items() for u in sorted(us)[:2]}
    trial_utts = sorted(set(data.wav_scp) - enroll_utts)
    sub = lambda utts: {u: data.wav_scp[u] for u in utts}  # noqa: E731
    write_data_dir(DataDir(wav_scp=sub(enroll_utts), utt2spk={u: data.utt2spk[u] for u in enroll_utts},
                           spk2gender=gender), root / "enroll")
    trials = [Trial(s, u, data.utt2spk[u] == s) for s in sorted(spk2utt) for u in trial_utts]
    write_data_dir(DataDir(wav_scp=sub(trial_utts), utt2spk={u: data.utt2spk[u] for u in trial_utts},
                           spk2gender=gender, trials=trials), root / "trials")
    return root / "enroll", root / "trials"


#: a tiny ECAPA-TDNN that trains in seconds
TINY_ECAPA = EcapaConfig(channels=(32, 32, 32, 32, 96), attention_channels=16, se_channels=16, res2net_scale=4,
                         embedding_dim=32)
