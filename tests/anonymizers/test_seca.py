"""SECA: the PII set, NER, replacements, span edits, reports, and that no original entity leaks into text files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from voxanon.anonymizers.base import utterance_rng
from voxanon.anonymizers.registry import build
from voxanon.anonymizers.seca import Edit, Seca, entity_word_ranges
from voxanon.audio.io import AudioError, write_wav
from voxanon.data.entity_lists import (
    ENTITY_TYPES,
    LENGTH_SLACK,
    MIN_SLACK,
    entity_lists,
    replacement,
)
from voxanon.data.kaldi import DataDir, write_data_dir
from voxanon.data.pii import load_pii_sentences, word_spans
from voxanon.data.redaction import redact_reference
from voxanon.data.sentences import normalize_transcript
from voxanon.errors import ConfigError
from voxanon.models.asr.base import WordTiming
from voxanon.models.ner import load_ner

SR = 16000
SENTENCE = "My neighbour Helen Carter drove to Leeds for the Oxfam meeting."


class FakeAsr:
    """Recognises the same timed words in any input (stands in for Whisper where timing is what matters)."""

    name = "fake-asr"

    def __init__(self, text: str, seconds_per_word: float = 0.3) -> None:
        self.words = [WordTiming(w, 0.1 + i * seconds_per_word, 0.1 + (i + 0.8) * seconds_per_word)
                      for i, w in enumerate(text.split())]

    def transcribe_with_timings(self, wavs, sr):
        return [list(self.words) for _ in wavs]


def speechlike(seconds: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SR)) / SR
    return (0.1 * np.sin(2 * np.pi * 140 * t) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))
            + 0.01 * rng.standard_normal(len(t))).astype(np.float32)


def seca_with(text: str, **params) -> Seca:
    seca = build("seca", {"ner": "gazetteer", **params})
    seca._models["asr"] = FakeAsr(text)
    return seca


def entity_texts() -> list[tuple[str, str]]:
    return [(s.text[e.start:e.end], e.type) for s in load_pii_sentences() for e in s.entities]


def test_pii_sentences_spans_and_word_spans():
    sentences = load_pii_sentences()
    assert 40 <= len(sentences) <= 60
    assert {t for _, t in entity_texts()} == set(ENTITY_TYPES)
    for s in sentences:
        for e, w in zip(s.entities, word_spans(s.text, s.entities)):
            assert s.text[e.start].isalpha() and s.text[e.end - 1].isalpha()
            said = [x.removesuffix("'S") for x in s.transcript.split()[w["words"][0]:w["words"][1]]]
            assert said == normalize_transcript(s.text[e.start:e.end]).split()


@pytest.mark.parametrize("upper", [False, True])
def test_gazetteer_finds_the_pii_entities(upper):
    ner = load_ner("gazetteer")
    found = total = 0
    for s in load_pii_sentences():
        text = s.text.upper() if upper else s.text
        spans = {(e.start, e.end) for e in ner.find(text)}
        found += sum((e.start, e.end) in spans for e in s.entities)
        total += len(s.entities)
    assert found / total > (0.65 if upper else 0.75)


def test_spacy_ner_maps_to_four_types():
    pytest.importorskip("spacy")
    from voxanon.models.ner import NerError

    try:
        ner = load_ner("spacy")
    except NerError:
        pytest.skip("no spaCy English pipeline installed")
    found = ner.find("Sophie Turner applied for a job at Google in London.")
    assert {e.type for e in found} <= set(ENTITY_TYPES) and len(found) >= 2


def test_unknown_ner_is_a_clear_error():
    from voxanon.models.ner import NerError

    with pytest.raises(NerError, match="unknown NER"):
        load_ner("bert")


def test_replacements_same_type_different_similar_length():
    lists = entity_lists()
    rng = np.random.default_rng(0)
    for original, kind in entity_texts():
        new = replacement(original, kind, rng)
        assert new.lower() != original.lower()
        if kind == "PER" and len(original.split()) > 1:
            first, last = new.split(" ", 1)
            assert first in lists.given_names and last in lists.surnames
        else:
            assert new in lists.by_type[kind]
            assert abs(len(new) - len(original)) <= max(MIN_SLACK, LENGTH_SLACK * len(original)) + 4
    assert replacement("Leeds", "LOC", utterance_rng(0, "a")) == replacement("Leeds", "LOC", utterance_rng(0, "a"))
    assert "Leeds" not in {replacement("Leeds", "LOC", np.random.default_rng(k)) for k in range(200)}


def test_entity_word_ranges_follow_character_spans():
    words = FakeAsr(SENTENCE).words
    ner = load_ner("gazetteer")
    ranges = entity_word_ranges(words, ner.find(" ".join(w.word for w in words)))
    assert [(a, b, t) for a, b, t in ranges] == [(2, 4, "PER"), (6, 7, "LOC"), (9, 10, "ORG")]


@pytest.mark.parametrize("mode", ["silence", "beep", "noise"])
def test_baselines_change_only_the_span(mode):
    wav = speechlike(2.0)
    seca = build("seca", {"edit": mode})
    edits = [Edit(0.5, 0.9, "PER", "Mia", (0, 1)), Edit(1.3, 1.5, "LOC", "Oslo", (2, 3))]
    out = seca.edit(wav, SR, edits, np.random.default_rng(0))
    assert len(out) == len(wav) and out.dtype == np.float32 and np.all(np.isfinite(out))
    inside = np.zeros(len(wav), dtype=bool)
    for e in edits:
        inside[int(round(e.start * SR)):int(round(e.end * SR))] = True
    np.testing.assert_array_equal(out[~inside], wav[~inside])
    core = slice(int(0.55 * SR), int(0.85 * SR))
    if mode == "silence":
        assert np.all(out[core] == 0)
    else:
        assert not np.allclose(out[core], wav[core])


def test_no_entity_leaves_the_audio_unchanged():
    wav = speechlike(2.0)
    seca = seca_with("The kettle is on the stove", edit="beep")
    out, sr = seca.process(wav, SR, utterance_rng(0, "u"))
    np.testing.assert_array_equal(out, wav)
    assert sr == SR and seca.report()["edits"] == []


def test_report_has_replacements_and_no_original_text():
    seca = seca_with(SENTENCE, edit="silence")
    out, _ = seca.process(speechlike(3.5), SR, utterance_rng(0, "u"))
    report = seca.report()
    assert [e["type"] for e in report["edits"]] == ["PER", "LOC", "ORG"]
    text = json.dumps(report).lower()
    for original in ("helen", "carter", "leeds", "oxfam"):
        assert original not in text
    words = report["transcript"].split()
    for e in report["edits"]:
        assert " ".join(words[slice(*e["words"])]) == " ".join(e["replacement"].upper().split())


@pytest.mark.parametrize("bad, match", [
    (np.zeros(0, dtype=np.float32), "empty"), (np.full(100, np.nan, dtype=np.float32), "NaN"),
    (np.zeros((100, 2), dtype=np.float32), "mono"), (np.zeros(1600, dtype=np.float32), "silent"),
])
def test_bad_input_is_a_clear_error(bad, match):
    with pytest.raises(AudioError, match=match):
        seca_with(SENTENCE).anonymize(bad, SR, utterance_rng(0, "u"))


@pytest.mark.parametrize("params", [{"edit": "bleep"}, {"types": ["PERSON"]}, {"types": []},
                                    {"backbone": "dit:x", "edit": "infill"},
                                    {"backbone": "f3va:default", "edit": "infill"}])
def test_bad_config_is_a_clear_error(params):
    with pytest.raises(ConfigError):
        seca = build("seca", params)
        seca.model("infill")


def test_redact_reference_swaps_the_aligned_words():
    ref = "MY NEIGHBOUR HELEN CARTER DROVE TO LEEDS"
    assert redact_reference(ref, "MY NEIGHBOR LILY BISHOP DROVE TO OSLO".split(), [(2, 4), (6, 7)]) == \
        "MY NEIGHBOUR LILY BISHOP DROVE TO OSLO"
    assert redact_reference(ref, "MY NEIGHBOUR HALEN CARTER DROVE TO LEEDS".split(), []) == ref


def test_corpus_run_writes_reports_and_leaks_no_entity(tmp_path: Path):
    src = tmp_path / "in"
    write_wav(src / "u1.wav", speechlike(3.5), SR)
    data = DataDir(wav_scp={"spk-u1": str(src / "u1.wav")}, utt2spk={"spk-u1": "spk"}, spk2gender={"spk": "f"},
                   text={"spk-u1": "MY NEIGHBOUR HELEN CARTER DROVE TO LEEDS FOR THE OXFAM MEETING"})
    write_data_dir(data, tmp_path / "data")
    from voxanon.jobs.runner.anonymize import anonymize_corpus

    seca = seca_with("My neighbour Helen Carter drove to Leeds for the Oxfam meeting.", edit="beep")
    summary = anonymize_corpus(tmp_path / "data", tmp_path / "out", seca, jobs=1, quiet=True)
    assert summary.failed == 0
    report = json.loads((tmp_path / "out" / "wav" / "spk-u1.json").read_text())
    assert len(report["edits"]) == 3
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file() and path.suffix != ".wav":
            content = path.read_text(encoding="utf-8", errors="replace").lower()
            for original in ("helen", "carter", "leeds", "oxfam"):
                assert original not in content, f"{original} in {path}"
    assert "NEIGHBOUR" in (tmp_path / "out" / "text").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("backbone", ["acoustic:default", "f3va"])
def test_infill_keeps_length_rate_and_the_audio_outside_the_spans(backbone):
    pytest.importorskip("torch")
    from voxanon.audio.io import resample
    from voxanon.audio.level import set_level, trim
    from voxanon.models.tts import load_tts

    said, said_sr = load_tts("kokoro:bm_george", threads=1).synthesize(SENTENCE)
    wav = set_level(trim(resample(said, said_sr, SR), SR), SR, 0.05)
    seca = build("seca", {"edit": "infill", "threads": 1, "crossfade": 0.02, "backbone": backbone})
    out, sr = seca.process(wav, SR, utterance_rng(0, "u"))
    assert sr == SR and len(out) == len(wav) and np.all(np.isfinite(out))
    edits = seca.report()["edits"]
    assert edits
    changed = np.zeros(len(wav), dtype=bool)
    for e in edits:
        changed[max(0, int(round((e["start"] - 0.02) * SR))):int(round((e["end"] + 0.02) * SR))] = True
    np.testing.assert_array_equal(out[~changed], wav[~changed])
    assert not np.allclose(out[changed], wav[changed])


def test_missing_spacy_model_falls_back_to_the_gazetteer(monkeypatch):
    from voxanon.models.ner import NerError, spacy_ner

    def missing(self):
        raise NerError("no spaCy English pipeline is installed: pip install 'voxanon[ner]'")

    monkeypatch.setattr(spacy_ner.SpacyNer, "__init__", missing)
    with pytest.warns(UserWarning, match="falls back to the gazetteer"):
        ner = load_ner.__wrapped__("auto")
    assert ner.name.startswith("gazetteer")
    with pytest.raises(NerError, match="voxanon\\[ner\\]"):
        load_ner.__wrapped__("spacy")


def test_chain_passes_on_the_report_of_seca_after_a_voice_anonymizer():
    chain = build("chain", {"steps": [{"method": "mcadams", "params": {}},
                                      {"method": "seca", "params": {"edit": "silence", "ner": "gazetteer"}}]})
    chain.steps[1]._models["asr"] = FakeAsr(SENTENCE)
    out, sr = chain.process(speechlike(3.5), SR, utterance_rng(0, "u"))
    assert sr == SR and len(out) == int(3.5 * SR)
    assert [e["type"] for e in chain.report()["edits"]] == ["PER", "LOC", "ORG"]
