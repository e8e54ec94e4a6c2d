"""VPC LibriSpeech preparation on a small fabricated LibriSpeech-shaped tree."""

import numpy as np
import pytest
import soundfile as sf

from tests.helpers.librispeech_tree import make_tree
from voxanon.audio.io import load_audio
from voxanon.data.kaldi import DataError, read_data_dir
from voxanon.data.librispeech import format_stats, prepare_librispeech


def test_vpc_construction(tmp_path):
    root = make_tree(tmp_path / "ls")
    stats = prepare_librispeech(root, tmp_path / "out", enroll_fraction=0.67, enroll_utts=2)
    enroll = read_data_dir(tmp_path / "out" / "libri_dev_enrolls")
    tf = read_data_dir(tmp_path / "out" / "libri_dev_trials_f")
    tm = read_data_dir(tmp_path / "out" / "libri_dev_trials_m")
    # dev: 3 F + 3 M speakers; 2 of 3 enrolled per gender with 2 utterances each
    assert stats["libri_dev"]["enrolls"]["f"] == {"speakers": 2, "utterances": 4}
    enrolled_f = {s for s in enroll.spk2utt if enroll.spk2gender[s] == "f"}
    # every trial utterance of the gender against every enrolled speaker of that gender
    assert len(tf.trials) == len(enrolled_f) * len(tf.wav_scp)
    assert {t.enroll_spk for t in tf.trials} == enrolled_f
    assert all(t.target == (tf.utt2spk[t.utt] == t.enroll_spk) for t in tf.trials)
    assert not set(tf.wav_scp) & set(enroll.wav_scp)
    impostor = (set(tf.utt2spk.values()) - enrolled_f).pop()  # the unenrolled speaker: only non-target trials
    assert not any(t.target for t in tf.trials if tf.utt2spk[t.utt] == impostor)
    t = stats["libri_dev"]["trials"]["f"]
    assert (t["speakers"], t["utterances"], t["target"], t["nontarget"]) == (3, 8, 4, 12)
    assert all(g == "m" for g in tm.spk2gender.values())
    assert all(text.startswith("WORDS OF UTTERANCE") for text in {**enroll.text, **tf.text}.values())
    entry = tf.wav_scp[next(iter(tf.wav_scp))]
    assert entry.startswith("flac -c -d -s /") and entry.endswith(".flac |")
    wav, sr = load_audio(entry)
    assert sr == 16000 and len(wav) == 800
    assert stats["train-clean-360"]["utterances"] == 8
    assert read_data_dir(tmp_path / "out" / "train-clean-360").spk2gender == {"31": "f", "32": "m"}
    assert "libri_test_trials_m" in format_stats(stats)


def test_official_lists_used_exactly(tmp_path):
    root = make_tree(tmp_path / "ls")
    lists = tmp_path / "lists"
    for d in ("libri_dev_enrolls", "libri_dev_trials_f", "libri_dev_trials_m", "libri_test_enrolls",
              "libri_test_trials_f", "libri_test_trials_m"):
        (lists / d).mkdir(parents=True)
    (lists / "libri_dev_enrolls" / "enrolls").write_text("11-100-0000\n21-100-0000\n")
    (lists / "libri_dev_trials_f" / "trials").write_text("11 11-100-0001 target\n11 12-100-0003 nontarget\n")
    (lists / "libri_dev_trials_m" / "trials").write_text("21 22-100-0002 nontarget\n")
    (lists / "libri_test_enrolls" / "enrolls").write_text("14-100-0000\n")
    (lists / "libri_test_trials_f" / "trials").write_text("14 14-100-0001 target\n")
    (lists / "libri_test_trials_m" / "trials").write_text("")
    prepare_librispeech(root, tmp_path / "out", lists=lists)
    tf = read_data_dir(tmp_path / "out" / "libri_dev_trials_f")
    assert [(t.enroll_spk, t.utt, t.target) for t in tf.trials] == [
        ("11", "11-100-0001", True), ("11", "12-100-0003", False)]
    assert list(read_data_dir(tmp_path / "out" / "libri_dev_enrolls").wav_scp) == ["11-100-0000", "21-100-0000"]
    (lists / "libri_dev_trials_m" / "trials").write_text("21 99-100-0000 nontarget\n")
    with pytest.raises(DataError, match="99-100-0000"):
        prepare_librispeech(root, tmp_path / "out2", lists=lists)


def test_missing_transcript_line(tmp_path):
    root = make_tree(tmp_path / "ls")
    trans = root / "LibriSpeech" / "dev-clean" / "12" / "100" / "12-100.trans.txt"
    trans.write_text("\n".join(trans.read_text().splitlines()[:-1]) + "\n")
    with pytest.raises(DataError, match="no transcript line for utterance 12-100-0003"):
        prepare_librispeech(root, tmp_path / "out")
    trans.unlink()
    with pytest.raises(DataError, match="12-100.trans.txt: transcript missing"):
        prepare_librispeech(root, tmp_path / "out")


def test_speaker_missing_from_speakers_txt(tmp_path):
    root = make_tree(tmp_path / "ls")
    path = root / "LibriSpeech" / "SPEAKERS.TXT"
    path.write_text("\n".join(l for l in path.read_text().splitlines() if not l.startswith("22 ")) + "\n")
    with pytest.raises(DataError, match="speaker 22 .* is not listed"):
        prepare_librispeech(root, tmp_path / "out")


def test_bad_speakers_line_and_no_subsets(tmp_path):
    (tmp_path / "SPEAKERS.TXT").write_text("11 | X | dev-clean | 1 | A\n")
    with pytest.raises(DataError, match="SPEAKERS.TXT:1"):
        prepare_librispeech(tmp_path, tmp_path / "out")
    (tmp_path / "SPEAKERS.TXT").write_text("11 | F | dev-clean | 1 | A\n")
    with pytest.raises(DataError, match="none of dev-clean"):
        prepare_librispeech(tmp_path, tmp_path / "out")


def make_timed_tree(root, n_utt=7, sr=1000):
    """dev-clean with 3 female and 3 male speakers; utterance 0 of each is 3 s (too short), the others 6 s."""
    lines = [";ID  |SEX| SUBSET | MINUTES | NAME"]
    for spk in ("11", "12", "13", "21", "22", "23"):
        sex = "F" if spk[0] == "1" else "M"
        lines.append(f"{spk:<5}| {sex} | dev-clean | 1.00 | Reader {spk}")
        chapter = root / "LibriSpeech" / "dev-clean" / spk / "100"
        chapter.mkdir(parents=True)
        for n in range(n_utt):
            seconds = 3 if n == 0 else 6
            sf.write(chapter / f"{spk}-100-{n:04d}.flac", np.zeros(seconds * sr, np.float32), sr, subtype="PCM_16")
        (chapter / f"{spk}-100.trans.txt").write_text("".join(f"{spk}-100-{n:04d} WORDS {n}\n" for n in range(n_utt)))
    (root / "LibriSpeech" / "SPEAKERS.TXT").write_text("\n".join(lines) + "\n")
    return root


def test_paper_trials(tmp_path):
    root = make_timed_tree(tmp_path / "ls")
    prepare_librispeech(root, tmp_path / "out", enroll_fraction=0.67, enroll_utts=2, trials="paper")
    enroll = read_data_dir(tmp_path / "out" / "libri_dev_enrolls")
    assert all(float(d) == 6 for d in enroll.utt2dur.values())
    for g in "fm":
        td = read_data_dir(tmp_path / "out" / f"libri_dev_trials_{g}")
        assert not any(u.endswith("-0000") for u in td.wav_scp)  # the 3 s utterances are never used
        assert not set(td.wav_scp) & set(enroll.wav_scp)
        enrolled = {s for s in enroll.spk2utt if enroll.spk2gender[s] == g}
        assert {t.enroll_spk for t in td.trials} == enrolled and len(enrolled) == 2
        for spk in enrolled:
            mine = [t for t in td.trials if t.enroll_spk == spk]
            n_enroll = len(enroll.spk2utt[spk])
            assert n_enroll == 2
            assert sum(t.target for t in mine) == 2 * n_enroll  # 6 usable utts: 2 enroll, 4 for the target trials
            impostors = [t for t in mine if not t.target]
            assert 0 < len(impostors) <= 2 * n_enroll
            assert {td.gender_of_utt(t.utt) for t in impostors} == {"f", "m"}  # one female, one male per enrollment
            assert all(td.utt2spk[t.utt] != spk for t in impostors)
            assert all(t.target == (td.utt2spk[t.utt] == spk) for t in mine)
    first = (tmp_path / "out" / "libri_dev_trials_f" / "trials").read_text()
    prepare_librispeech(root, tmp_path / "again", enroll_fraction=0.67, enroll_utts=2, trials="paper")
    assert (tmp_path / "again" / "libri_dev_trials_f" / "trials").read_text() == first


def test_paper_trials_errors(tmp_path, capsys):
    from voxanon.cli import main
    from voxanon.errors import ConfigError

    root = make_timed_tree(tmp_path / "ls")
    with pytest.raises(ConfigError, match="leave out --trials"):
        prepare_librispeech(root, tmp_path / "out", lists=tmp_path, trials="paper")
    assert main(["data", "librispeech", str(root), str(tmp_path / "out"), "--trials", "paper"]) == 0
    assert "libri_dev_trials_f" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["data", "librispeech", str(root), str(tmp_path / "o2"), "--trials", "grid"])
    assert exc.value.code == 2 and "invalid choice: 'grid'" in capsys.readouterr().err
