"""ASR backends: offline WER on real read speech, the wav2vec2 loader on a tiny model built here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.audio import LIBRIVOX
from voxanon.audio.io import load_audio, resample
from voxanon.metrics import wer
from voxanon.models.asr import AsrError, load_asr
from voxanon.models.asr.whisper import WhisperBackend


def librivox() -> tuple[list[str], list[np.ndarray], list[str]]:
    """Utterance ids, 16 kHz waveforms and reference transcripts of the shipped clips."""
    refs = dict(line.split(maxsplit=1) for line in (LIBRIVOX / "text").read_text().splitlines())
    wavs = [load_audio(LIBRIVOX / f"{utt}.flac")[0] for utt in refs]
    return list(refs), wavs, list(refs.values())


@pytest.mark.slow
def test_whisper_default_wer_on_real_speech():
    _, wavs, refs = librivox()
    asr = load_asr("whisper-tiny", threads=1)
    hyps = asr.transcribe(wavs, 16000)
    # measured 20 % (6/30 words: hyphenated compounds count as errors under VPC normalisation)
    assert wer(refs, hyps).wer <= 25.0
    assert asr.name.startswith("whisper-tiny.en")
    assert WhisperBackend(threads=1, batch_size=3).transcribe(wavs, 16000) == hyps  # one padded batch


def test_whisper_resamples_and_silence_is_empty():
    _, wavs, refs = librivox()
    asr = load_asr("whisper-tiny", threads=1)
    hyps = asr.transcribe([resample(wavs[2], 16000, 22050), np.zeros(22050, np.float32)], 22050)
    assert wer(refs[2:3], hyps[:1]).wer <= 15.0
    assert hyps[1] == ""


def test_whisper_base_transcribes_english_and_french_real_speech():
    from voxanon.data.debian_clips import prompt_clips
    from voxanon.metrics.text import normalize_basic

    _, wavs, refs = librivox()
    base = load_asr("whisper-base:en", threads=1)
    assert base.name == "whisper-base-ct2-int8-beam5-en"
    assert wer(refs, base.transcribe(wavs, 16000), "spoken").wer <= 10.0  # measured 0 of 30 words (tiny.en: 2)
    french = prompt_clips(language="fr")
    if not french:
        pytest.skip("asterisk-core-sounds-fr-wav is not installed (tools/setup.sh installs it)")
    clips = [c for c in french if c.utt in ("asterisk-june-agent-loggedoff", "asterisk-june-agent-loginok")]
    audio = [load_audio(c.path) for c in clips]                       # 8 kHz telephone speech
    hyps = load_asr("whisper-base:fr", threads=1).transcribe([a for a, _ in audio], audio[0][1])
    assert [normalize_basic(h) for h in hyps] == [normalize_basic(c.text) for c in clips]
    detector = load_asr("whisper-base", threads=1)
    assert detector.name.endswith("-detected")
    assert detector.model.detect_language(audio=resample(audio[0][0], 8000, 16000))[0] == "fr"


def test_whisper_refuses_what_it_cannot_do(tmp_path, monkeypatch):
    with pytest.raises(AsrError, match="English only"):
        WhisperBackend("tiny.en", language="fr")
    with pytest.raises(AsrError, match="no language 'xx'"):
        load_asr("whisper-base:xx")
    monkeypatch.setenv("VOXANON_WHISPER_BASE_DIR", str(tmp_path))
    with pytest.raises(AsrError, match="tools/setup.sh"):
        WhisperBackend("base")


def test_pocketsphinx_wer_and_timings():
    _, wavs, refs = librivox()
    asr = load_asr("pocketsphinx")
    hyps = asr.transcribe(wavs, 16000)
    assert wer(refs, hyps).wer <= 50.0  # measured 40 %
    words = asr.transcribe_with_timings(wavs[:1], 16000)[0]
    assert [w.word for w in words] == hyps[0].split()
    assert all(0 <= w.start < w.end <= len(wavs[0]) / 16000 + 0.02 for w in words)
    assert all(a.end <= b.start + 1e-6 for a, b in zip(words, words[1:]))


def test_unknown_spec_and_bad_audio():
    with pytest.raises(AsrError, match="unknown ASR backend"):
        load_asr("kaldi")
    with pytest.raises(Exception, match="NaN"):
        load_asr("pocketsphinx").transcribe([np.full(1600, np.nan, np.float32)], 16000)


def _tiny_wav2vec2(path: Path, *, favour: str | None = None) -> None:
    """Save a random tiny wav2vec2 CTC model with a character vocabulary and processor to ``path``."""
    import torch
    from transformers import (
        Wav2Vec2Config,
        Wav2Vec2CTCTokenizer,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2ForCTC,
        Wav2Vec2Processor,
    )

    vocab = {"<pad>": 0, "<unk>": 1, "|": 2, **{c: i + 3 for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZ'")}}
    (path / "vocab.json").write_text(json.dumps(vocab))
    tokenizer = Wav2Vec2CTCTokenizer(str(path / "vocab.json"), unk_token="<unk>", pad_token="<pad>",
                                     word_delimiter_token="|")
    features = Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, padding_value=0.0, do_normalize=True,
                                        return_attention_mask=True)
    Wav2Vec2Processor(feature_extractor=features, tokenizer=tokenizer).save_pretrained(path)
    config = Wav2Vec2Config(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                            intermediate_size=32, conv_dim=(8, 8), conv_stride=(5, 4), conv_kernel=(10, 4),
                            num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=2, pad_token_id=0,
                            feat_extract_norm="layer", do_stable_layer_norm=True)
    torch.manual_seed(0)
    model = Wav2Vec2ForCTC(config)
    if favour is not None:  # make every frame emit one character
        with torch.no_grad():
            model.lm_head.weight.zero_()
            model.lm_head.bias.fill_(-10.0)
            model.lm_head.bias[vocab[favour]] = 10.0
    model.save_pretrained(path)


@pytest.mark.slow
def test_wav2vec2_loader_on_tiny_saved_model(tmp_path):
    import torch

    torch.set_num_threads(1)
    (tmp_path / "a").mkdir()
    _tiny_wav2vec2(tmp_path / "a", favour="K")
    asr = load_asr(f"wav2vec2:{tmp_path / 'a'}")
    assert asr.name.startswith("wav2vec2:a@")
    rng = np.random.default_rng(0)
    assert asr.transcribe([0.1 * rng.standard_normal(8000).astype(np.float32)], 16000) == ["K"]

    (tmp_path / "b").mkdir()
    _tiny_wav2vec2(tmp_path / "b")
    asr = load_asr(f"wav2vec2:{tmp_path / 'b'}")
    wavs = [0.1 * rng.standard_normal(n).astype(np.float32) for n in (16000, 4000, 9000)]
    batched = asr.transcribe(wavs, 16000)
    alone = [asr.transcribe([w], 16000)[0] for w in wavs]
    assert batched == alone  # padding with an attention mask does not change any item
    assert all(batched)


def test_wav2vec2_missing_model_is_a_clear_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(AsrError, match="cannot load wav2vec2 model"):
        load_asr(f"wav2vec2:{tmp_path / 'empty'}")
