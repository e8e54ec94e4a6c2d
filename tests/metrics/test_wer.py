import pytest

from voxanon.metrics import normalize_vpc, wer


def test_normalize_vpc():
    assert normalize_vpc(" Hello,  world! Is it me? Yes. ") == "HELLO WORLD IS IT ME YES"
    assert normalize_vpc("don't-stop") == "DON'T-STOP"


def test_hand_computed_corpus_and_utterances():
    refs = {"u1": "Hello, world!", "u2": "x y z", "u3": "a b"}
    hyps = {"u1": "hello word", "u2": "x z", "u3": "a b c"}
    result = wer(refs, hyps)
    # u1: 1 S of 2 words; u2: 1 D of 3; u3: 1 I of 2 -> 3 / 7
    assert result.wer == pytest.approx(100 * 3 / 7)
    assert (result.substitutions, result.deletions, result.insertions, result.n_reference_words) == (1, 1, 1, 7)
    assert result.normalization == "vpc"
    details = {u.utt_id: (u.substitutions, u.deletions, u.insertions, u.hits) for u in result.utterances}
    assert details == {"u1": (1, 0, 0, 1), "u2": (0, 1, 0, 2), "u3": (0, 0, 1, 2)}
    assert result.utterances[0].reference == "HELLO WORLD"
    # characters: "HELLO WORLD" (11) vs "HELLO WORD": 1 D; "X Y Z" vs "X Z": 2 D;
    # "A B" vs "A B C": 2 I -> 5 / (11 + 5 + 3)
    assert result.cer == pytest.approx(100 * 5 / 19)


def test_sequences_pair_by_position_and_normalisation_matters():
    assert wer(["Hello world."], ["hello world"]).wer == 0.0
    raw = wer(["Hello world."], ["hello world"], normalization="none")
    assert raw.wer == 100.0 and raw.normalization == "none"
    assert raw.utterances[0].utt_id == "0"


def test_empty_reference_counts_insertions():
    result = wer({"a": "one two", "b": ""}, {"a": "one two", "b": "noise"})
    assert result.wer == 50.0
    assert result.utterances[1].insertions == 1


def test_mismatched_inputs_are_rejected():
    with pytest.raises(ValueError, match="missing"):
        wer({"a": "x", "b": "y"}, {"a": "x"})
    with pytest.raises(ValueError):
        wer(["x", "y"], ["x"])
    with pytest.raises(TypeError):
        wer({"a": "x"}, ["x"])
    with pytest.raises(KeyError):
        wer(["x"], ["x"], normalization="unknown")


def test_character_error_rate_counts_characters_not_spaces():
    # 我 爱 北 京 / 天 安 门 -> one substitution (京 -> 经) and one deletion (门): 2 errors over 7 characters
    result = wer({"a": "我爱北京", "b": "天安 门。"}, {"a": "我爱北经", "b": "天安"}, "basic", unit="char")
    assert result.unit == "char" and result.error_rate_name == "CER"
    assert result.n_reference_words == 7 and result.wer == pytest.approx(200 / 7) == result.cer
    assert [(u.substitutions, u.deletions, u.n_reference_words) for u in result.utterances] == [(1, 0, 4), (0, 1, 3)]
    assert wer(["a b"], ["a b"]).error_rate_name == "WER"
    with pytest.raises(ValueError, match="'word' or 'char'"):
        wer(["a"], ["a"], unit="syllable")
