"""Kaldi data directories (read, validate, write) and plain audio folders."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers.audio import SPEAKERS, write_utterance
from voxanon.data.folder import mirrored_path, scan_audio_folder
from voxanon.data.kaldi import DataError, Trial, read_data_dir, write_data_dir


def test_reads_the_fixture(data_dir: Path) -> None:
    data = read_data_dir(data_dir)
    assert data.utts == [f"{spk}-utt{i:03d}" for spk in SPEAKERS for i in range(2)]
    assert data.utt2spk["spk2-utt001"] == "spk2"
    assert data.gender_of_utt("spk2-utt000") == "m"
    assert data.text["spk1-utt001"] == "HELLO WORLD 1"
    assert data.spk2utt == {spk: [f"{spk}-utt000", f"{spk}-utt001"] for spk in SPEAKERS}
    assert data.lines["utt2spk"]["spk1-utt001"] == 2


def test_write_then_read_is_identical(data_dir: Path, tmp_path: Path) -> None:
    data = read_data_dir(data_dir)
    data.trials = [Trial("spk1", "spk2-utt000", False), Trial("spk1", "spk1-utt001", True)]
    data.utt2emo = {u: "neu" for u in data.utts}
    data.spk2fold = {"spk1": "1", "spk2": "2", "spk3": "1"}
    out = write_data_dir(data, tmp_path / "copy")
    again = read_data_dir(out)
    assert again.path == out
    again.path = data.path
    assert again == data
    assert not list(out.glob(".*tmp"))
    assert (out / "spk2utt").read_text().splitlines()[0] == "spk1 spk1-utt000 spk1-utt001"


def test_blank_lines_crlf_and_text_with_spaces(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "wav.scp").write_bytes(b"a /x/a.wav\r\n\r\nb sox /x/b.flac -t wav - |\r\n")
    (d / "text").write_text("a  two   words \nb\n", encoding="utf-8")
    data = read_data_dir(d)
    assert data.wav_scp == {"a": "/x/a.wav", "b": "sox /x/b.flac -t wav - |"}
    assert data.text == {"a": "two   words", "b": ""}


def test_subset_keeps_only_related_entries(data_dir: Path) -> None:
    data = read_data_dir(data_dir)
    data.trials = [Trial("spk1", "spk2-utt000", False), Trial("spk2", "spk1-utt000", False)]
    sub = data.subset(["spk2-utt000"])
    assert sub.utts == ["spk2-utt000"]
    assert sub.spk2gender == {"spk2": "m"}
    assert sub.trials == [Trial("spk1", "spk2-utt000", False)]


# (file to overwrite, its content, expected error as a regex; {d} is the data dir)
MALFORMED = {
    "duplicate utterance": ("wav.scp", "spk1-utt000 /a.wav\nspk1-utt000 /b.wav\n",
                            r"wav\.scp:2: duplicate id 'spk1-utt000' \(first seen on line 1\)"),
    "wav.scp line without path": ("wav.scp", "spk1-utt000\n", r"wav\.scp:1: malformed line"),
    "utt2spk three fields": ("utt2spk", "spk1-utt000 spk1 extra\n", r"utt2spk:1: malformed line .*two fields"),
    "utt in utt2spk not in wav.scp": (
        "utt2spk", "".join(f"{s}-utt00{i} {s}\n" for s in SPEAKERS for i in range(2)) + "ghost spk1\n",
        r"utt2spk:7: utterance 'ghost' is in utt2spk but not in wav\.scp"),
    "utt in wav.scp without speaker": ("utt2spk", "spk1-utt000 spk1\n", r"wav\.scp:2: .*'spk1-utt001' has no speaker"),
    "unknown gender": ("spk2gender", "spk1 f\nspk2 x\nspk3 f\n", r"spk2gender:2: .*unknown gender 'x'"),
    "speaker without gender": ("spk2gender", "spk1 f\nspk3 f\n", r"utt2spk:3: speaker 'spk2' has no gender"),
    "text of unknown utterance": ("text", "nobody hi\n", r"text:1: utterance 'nobody' is not in wav\.scp"),
    "non-numeric duration": ("utt2dur", "spk1-utt000 long\n", r"utt2dur:1: .*non-numeric duration 'long'"),
    "spk2utt mismatch": ("spk2utt", "spk1 spk1-utt000\nspk2 spk2-utt000 spk2-utt001\nspk3 spk3-utt000 spk3-utt001\n",
                         r"spk2utt:1: utterances of speaker 'spk1' do not match utt2spk"),
    "spk2utt missing speaker": ("spk2utt", "spk1 spk1-utt000 spk1-utt001\nspk2 spk2-utt000 spk2-utt001\n",
                                r"utt2spk:5: speaker 'spk3' is missing from spk2utt"),
    "spk2utt duplicate speaker": ("spk2utt", "spk1 spk1-utt000\nspk1 spk1-utt001\n",
                                  r"spk2utt:2: duplicate speaker 'spk1' \(first seen on line 1\)"),
    "spk2utt speaker alone": ("spk2utt", "spk1\n", r"spk2utt:1: malformed line"),
    "spk2fold unknown speaker": ("spk2fold", "spk1 1\nspk9 2\n", r"spk2fold:2: speaker 'spk9' is not in utt2spk"),
    "trial with bad label": ("trials", "spk1 spk2-utt000 maybe\n", r"trials:1: malformed trial"),
    "trial with two fields": ("trials", "spk1 target\n", r"trials:1: malformed trial"),
    "trial of unknown utterance": ("trials", "spk1 spk2-utt000 nontarget\nspk1 nobody target\n",
                                   r"trials:2: trial utterance 'nobody' is not in wav\.scp"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_data_dir_errors_name_file_line_and_problem(data_dir: Path, case: str) -> None:
    name, content, expected = MALFORMED[case]
    (data_dir / name).write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=re.escape(str(data_dir)) + "/" + expected):
        read_data_dir(data_dir)


def test_non_utf8_file_names_the_line(data_dir: Path) -> None:
    (data_dir / "text").write_bytes(b"spk1-utt000 fine\nspk1-utt001 caf\xe9\n")
    with pytest.raises(DataError, match=r"text:2: not valid UTF-8 \(byte 0xe9\)"):
        read_data_dir(data_dir)


def test_not_a_data_dir(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no wav.scp"):
        read_data_dir(tmp_path)


def test_validate_false_skips_cross_file_checks(data_dir: Path) -> None:
    (data_dir / "spk2gender").write_text("spk1 x\n", encoding="utf-8")
    assert read_data_dir(data_dir, validate=False).spk2gender == {"spk1": "x"}


# ---- plain folders -----------------------------------------------------------------------------------------


def test_folder_scan_is_recursive_with_posix_ids(audio_folder: Path) -> None:
    (audio_folder / "notes.txt").write_text("not audio")
    write_utterance(audio_folder / ".hidden" / "x.wav")
    found = scan_audio_folder(audio_folder)
    assert found == {"a": audio_folder / "a.wav", "sub/b": audio_folder / "sub" / "b.flac",
                     "sub/deeper/c": audio_folder / "sub" / "deeper" / "c.ogg"}
    assert mirrored_path("/out", "sub/b") == Path("/out/sub/b.wav")


def test_folder_files_differing_only_by_extension(audio_folder: Path) -> None:
    write_utterance(audio_folder / "sub" / "b.wav")
    with pytest.raises(DataError, match=r"sub/b\.flac and .*sub/b\.wav differ only by extension"):
        scan_audio_folder(audio_folder)


def test_folder_without_audio(tmp_path: Path) -> None:
    (tmp_path / "readme.txt").write_text("x")
    with pytest.raises(DataError, match="no audio files"):
        scan_audio_folder(tmp_path)
    with pytest.raises(DataError, match="not a folder"):
        scan_audio_folder(tmp_path / "readme.txt")


def test_repeated_trial_keeps_its_first_place_and_last_label(data_dir: Path) -> None:
    """As the VPC kits read trials (a dict keyed by (speaker, utterance))."""
    (data_dir / "trials").write_text("spk1 spk2-utt000 nontarget\nspk1 spk1-utt001 target\n"
                                     "spk1 spk2-utt000 target\n", encoding="utf-8")
    trials = read_data_dir(data_dir).trials
    assert [(t.enroll_spk, t.utt, t.target) for t in trials] == [("spk1", "spk2-utt000", True),
                                                               ("spk1", "spk1-utt001", True)]
