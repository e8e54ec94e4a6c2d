"""``voxanon anonymize`` in conversation mode over a folder of recordings: RTTM and report beside each output,
given turns checked, one bad recording listed and the rest done, resumption, the single-speaker fallback."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from tests.helpers.conversation import SR, two_person, voices
from voxanon.cli import main
from voxanon.data.rttm import Turn, read_rttm, write_rttm
from voxanon.errors import EXIT_DATA, EXIT_OK, EXIT_PARTIAL


def anonymize(args: list[str]) -> int:
    """``voxanon anonymize --jobs 1 --method mcadams ARGS``."""
    return main(["anonymize", "--jobs", "1", "--method", "mcadams", *args])


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A folder with the two-person recording ``conv`` and a one-person recording ``solo``, and conv's turns."""
    root = tmp_path_factory.mktemp("conversations")
    wav, turns = two_person("conv")
    (root / "in").mkdir()
    sf.write(root / "in" / "conv.wav", wav, SR, subtype="PCM_16")
    first, _ = voices()
    sf.write(root / "in" / "solo.wav", np.concatenate([first[0], np.zeros(SR // 2), first[1]]), SR, subtype="PCM_16")
    write_rttm(root / "conv.rttm", turns)
    return root


def test_given_turns_give_rttm_and_report_beside_and_an_uncovered_recording_fails_alone(corpus, capsys) -> None:
    out = corpus / "out_rttm"
    code = anonymize(["--rttm", str(corpus / "conv.rttm"), "--quiet",
                 str(corpus / "in"), str(out)])
    assert code == EXIT_PARTIAL  # solo has no turns in the RTTM: listed, conv is done
    failures = (out / "failures.tsv").read_text()
    assert "solo" in failures and "no turns for recording 'solo'" in failures
    info = sf.info(out / "conv.wav")
    assert info.frames == sf.info(corpus / "in" / "conv.wav").frames and info.samplerate == SR
    assert read_rttm(out / "conv.rttm") == read_rttm(corpus / "conv.rttm")
    report = json.loads((out / "conv.json").read_text())
    assert report["mode"] == "conversation" and set(report["speakers"]) == {"A", "B"}
    before = (out / "conv.wav").read_bytes()
    assert anonymize(["--rttm", str(corpus / "conv.rttm"),
                 str(corpus / "in"), str(out)]) == EXIT_PARTIAL
    assert "1 of 2 utterances already done" in capsys.readouterr().err
    assert (out / "conv.wav").read_bytes() == before


def test_turns_that_disagree_with_the_input_are_one_clear_line(corpus, capsys) -> None:
    write_rttm(corpus / "other.rttm", [Turn("elsewhere", 0.0, 1.0, "A")])
    code = anonymize(["--rttm", str(corpus / "other.rttm"), str(corpus / "in"),
                 str(corpus / "out_other")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_DATA and len(err) == 1 and "other.rttm" in err[0] and "elsewhere" in err[0]
    late = [*read_rttm(corpus / "conv.rttm")["conv"], Turn("conv", 30.0, 60.0, "B")]
    write_rttm(corpus / "late.rttm", late)
    out = corpus / "out_late"
    assert anonymize(["--rttm", str(corpus / "late.rttm"), "--quiet",
                 str(corpus / "in"), str(out)]) == EXIT_PARTIAL
    assert "ends after the audio of conv" in (out / "failures.tsv").read_text()
    assert anonymize(["--rttm", "x.rttm", "--per-channel", str(corpus / "in"),
                 str(corpus / "out_bad")]) == 2


def test_diarized_one_speaker_recording_is_the_plain_run_byte_for_byte(corpus) -> None:
    solo = corpus / "solo_only"
    solo.mkdir()
    (solo / "solo.wav").write_bytes((corpus / "in" / "solo.wav").read_bytes())
    assert anonymize(["--conversation", "--quiet", str(solo),
                 str(corpus / "out_conv")]) == EXIT_OK
    assert anonymize(["--quiet", str(solo), str(corpus / "out_plain")]) == EXIT_OK
    assert (corpus / "out_conv" / "solo.wav").read_bytes() == (corpus / "out_plain" / "solo.wav").read_bytes()
    assert {t.speaker for t in read_rttm(corpus / "out_conv" / "solo.rttm")["solo"]} == {"spk0"}


def test_per_channel_keeps_the_channels_and_labels_carry_across_recordings(corpus) -> None:
    first, second = voices()
    stereo_in = corpus / "stereo"
    stereo_in.mkdir()
    n = 5 * SR
    call = np.zeros((n, 2), dtype=np.float32)
    call[: len(first[0][:n]), 0] = first[0][:n]
    letters = np.concatenate(second[:4])[: n - 2 * SR]
    call[2 * SR:2 * SR + len(letters), 1] = letters
    sf.write(stereo_in / "call1.wav", call, SR, subtype="PCM_16")
    sf.write(stereo_in / "call2.wav", call[:, ::-1], SR, subtype="PCM_16")  # the same people, channels swapped
    (corpus / "map").write_text("call1 ch1 reader\ncall1 ch2 letters\ncall2 ch2 reader\ncall2 ch1 letters\n")
    out = corpus / "out_stereo"
    assert anonymize(["--per-channel", "--speaker-map", str(corpus / "map"), "--quiet", str(stereo_in),
                      str(out)]) == EXIT_OK
    one, sr = sf.read(out / "call1.wav")
    two, _ = sf.read(out / "call2.wav")
    assert sr == SR and one.shape == two.shape == (n, 2)
    np.testing.assert_array_equal(one[:, 0], two[:, 1])  # the same label, the same pseudo-speaker, same output
    assert {(t.speaker, t.channel) for t in read_rttm(out / "call1.rttm")["call1"]} == {("ch1", 1), ("ch2", 2)}
    report = json.loads((out / "call1.json").read_text())
    assert report["mode"] == "per-channel" and report["speakers"]["ch1"]["key"] == "reader"
