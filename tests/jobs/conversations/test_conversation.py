"""Conversation mode on a real two-person recording: timing kept, a pseudo-speaker per speaker, deterministic,
the single-speaker fallback, target speakers, one speaker per channel and the fault paths."""

from __future__ import annotations

import numpy as np
import pytest

import voxanon
from tests.helpers.conversation import SR, two_person, voices
from voxanon.anonymizers.registry import build
from voxanon.data.rttm import Turn
from voxanon.errors import DataError
from voxanon.jobs.conversations.conversation import anonymize_channels, anonymize_conversation
from voxanon.jobs.conversations.pseudo import ENCODER
from voxanon.models.speaker import load_encoder


@pytest.fixture(scope="module")
def encoder():
    return load_encoder(ENCODER)


@pytest.fixture(scope="module")
def conversation():
    return two_person()


def _cosine(encoder, a: np.ndarray, b: np.ndarray) -> float:
    e = encoder.embed([a, b], SR)
    return float(e[0] @ e[1])


def test_each_speaker_gets_a_pseudo_speaker_of_their_own_timing_kept_deterministic(encoder, conversation) -> None:
    wav, turns = conversation
    mcadams = build("mcadams", {})
    result = anonymize_conversation(mcadams, wav, SR, turns, recording="conv", seed=3, encoder=encoder)
    assert result.sr == SR and result.wav.shape == wav.shape
    report = result.report
    keys = {s: report["speakers"][s]["key"] for s in ("A", "B")}
    assert keys["A"] != keys["B"] and all(k.startswith(f"conv/{s}") for s, k in keys.items())
    assert report["min_pseudo_distance"] > 0 and len(report["keys_tried"]["B"]) == 4
    again = anonymize_conversation(mcadams, wav, SR, turns, recording="conv", seed=3, encoder=encoder)
    assert np.array_equal(result.wav, again.wav)
    # every turn is changed (no sample passes with the original voice), silence stays near silence
    for turn in turns:
        a, b = round(turn.start * SR), round(turn.end * SR)
        assert np.max(np.abs(result.wav[a:b] - wav[a:b])) > 0.01
    # each speaker's turns come out in their own pseudo-voice, the same through the recording
    a1, a2 = [result.wav[round(t.start * SR):round(t.end * SR)] for t in turns if t.speaker == "A"][:2]
    b1 = next(result.wav[round(t.start * SR):round(t.end * SR)] for t in turns if t.speaker == "B")
    assert _cosine(encoder, a1, a2) > _cosine(encoder, a1, b1)


def test_one_speaker_is_the_single_speaker_output_byte_for_byte(encoder) -> None:
    first, _ = voices()
    wav = np.concatenate([first[0], np.zeros(SR // 2, dtype=np.float32), first[1]])
    mcadams = build("mcadams", {})
    turns = [Turn("utt1", 0.0, len(first[0]) / SR, "spk0"), Turn("utt1", len(first[0]) / SR + 0.5,
                                                                   len(first[1]) / SR, "spk0")]
    result = anonymize_conversation(mcadams, wav, SR, turns, recording="utt1", seed=5, encoder=encoder)
    single, single_sr = voxanon.anonymize_waveform(mcadams, wav, SR, seed=5, key="utt1")
    assert result.sr == single_sr and np.array_equal(result.wav, single)
    assert result.report["decision"].startswith("one speaker")
    silent = anonymize_conversation(mcadams, wav, SR, [], recording="utt1", seed=5, encoder=encoder)
    assert np.array_equal(silent.wav, single) and silent.report["decision"].startswith("no speech found")


def test_the_same_label_gives_the_same_pseudo_speaker_in_every_recording(encoder, conversation) -> None:
    wav, turns = conversation
    mcadams = build("mcadams", {})
    one = anonymize_conversation(mcadams, wav, SR, turns, recording="rec1", labels={"A": "alice"}, encoder=encoder)
    two = anonymize_conversation(mcadams, wav, SR, [Turn("rec2", t.start, t.duration, "X" if t.speaker == "A"
                                                         else "Y") for t in turns],
                                 recording="rec2", labels={"X": "alice"}, encoder=encoder)
    assert one.report["speakers"]["A"]["key"] == two.report["speakers"]["X"]["key"] == "alice"
    first = next(t for t in turns if t.speaker == "A")
    a, b = round(first.start * SR), round(first.end * SR) - SR // 10
    assert np.array_equal(one.wav[a:b], two.wav[a:b])


def test_target_speaker_mode_anonymizes_only_the_enrolled_speaker(encoder, conversation) -> None:
    wav, turns = conversation
    _, second = voices()
    from tests.helpers.conversation import SECOND
    from voxanon.audio.io import load_audio, resample
    from voxanon.data.debian_clips import find_clips

    held_out = [c for c in find_clips() if c.speaker == SECOND][12:16]  # B's clips the conversation does not use
    enrollment = np.concatenate([resample(*load_audio(c.path), SR) for c in held_out])
    result = voxanon.anonymize_conversation(build("mcadams", {}), wav, SR, turns=turns, recording="call",
                                            targets=[(enrollment, SR)])
    speakers = result.report["speakers"]
    assert speakers["B"]["anonymized"] and not speakers["A"]["anonymized"], speakers
    assert result.wav.shape == wav.shape
    for turn in turns:
        a, b = round(turn.start * SR) + SR // 10, round(turn.end * SR) - SR // 10
        same = np.array_equal(result.wav[a:b], wav[a:b])
        assert same == (turn.speaker == "A")


def test_one_speaker_per_channel_keeps_the_channels(encoder) -> None:
    first, second = voices()
    n = 6 * SR
    stereo = np.zeros((n, 2), dtype=np.float32)
    stereo[: min(n, len(first[0])), 0] = first[0][:n]
    b = np.concatenate(second[:4])
    stereo[3 * SR:3 * SR + len(b[: n - 3 * SR]), 1] = b[: n - 3 * SR]
    result = anonymize_channels(build("mcadams", {}), stereo, SR, recording="call", encoder=encoder)
    assert result.wav.shape == stereo.shape and result.sr == SR
    assert {t.speaker for t in result.turns} == {"ch1", "ch2"} and {t.channel for t in result.turns} == {1, 2}
    assert result.report["speakers"]["ch1"]["key"] != result.report["speakers"]["ch2"]["key"]
    assert not np.array_equal(result.wav[:, 0], stereo[:, 0]) and not np.array_equal(result.wav[:, 1], stereo[:, 1])
    with pytest.raises(DataError, match="at least two channels"):
        anonymize_channels(build("mcadams", {}), stereo[:, :1], SR, recording="call", encoder=encoder)


def test_turns_past_the_end_of_the_audio_are_refused(encoder, conversation) -> None:
    wav, turns = conversation
    late = [*turns, Turn("conv", len(wav) / SR - 1.0, 5.0, "B")]
    with pytest.raises(DataError, match=r"conv: turn of B at .* ends after the audio of conv"):
        anonymize_conversation(build("mcadams", {}), wav, SR, late, recording="conv", encoder=encoder)


def test_long_recordings_go_in_pieces_with_the_same_pseudo_speakers(encoder, conversation) -> None:
    from voxanon.jobs.conversations.conversation import ConversationSettings

    wav, turns = conversation
    mcadams = build("mcadams", {})
    whole = anonymize_conversation(mcadams, wav, SR, turns, recording="conv", encoder=encoder)
    cut = anonymize_conversation(mcadams, wav, SR, turns, recording="conv", encoder=encoder,
                                 settings=ConversationSettings(max_piece=2.0))
    assert cut.report["pieces"] > 3 * whole.report["pieces"] and cut.wav.shape == wav.shape
    assert {s: v["key"] for s, v in cut.report["speakers"].items()} == \
           {s: v["key"] for s, v in whole.report["speakers"].items()}
    assert np.corrcoef(cut.wav, whole.wav)[0, 1] > 0.9  # the same voices; only the cuts' surroundings differ
