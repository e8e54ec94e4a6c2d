import pytest


def test_spoken_normalisation_removes_all_punctuation_but_apostrophes():
    from voxanon.metrics.text import NORMALIZERS, normalize_spoken

    assert normalize_spoken("ill-disposed; “yes”: it’s O'Brien.") == "ILL DISPOSED YES IT'S O'BRIEN"
    assert NORMALIZERS["spoken"] is normalize_spoken
    # agrees with the VPC normalisation on text that has only VPC punctuation and no numbers
    assert normalize_spoken("Hello, world! Is it? Yes.") == NORMALIZERS["vpc"]("Hello, world! Is it? Yes.")


@pytest.mark.parametrize("written, said", [
    ("10 of clubs.", "TEN OF CLUBS"),
    ("Press 1, then 0.", "PRESS ONE THEN ZERO"),
    ("more than 10,000 books", "MORE THAN TEN THOUSAND BOOKS"),
    ("on the 3rd floor, her 21st", "ON THE THIRD FLOOR HER TWENTY FIRST"),
    ("The 8.15 train; at 7:05; by 9:00", "THE EIGHT FIFTEEN TRAIN AT SEVEN OH FIVE BY NINE"),
    ("£12 for adults, £2.50 each, $1", "TWELVE POUNDS FOR ADULTS TWO POUNDS FIFTY EACH ONE DOLLAR"),
    ("£1.50 or $1.5", "ONE POUND FIFTY OR ONE POINT FIVE DOLLARS"),
    ("2.5 kg, 5% and 0.25", "TWO POINT FIVE KG FIVE PERCENT AND ZERO POINT TWO FIVE"),
    ("in 1990, the 1990s, 1500 men, 2005", "IN NINETEEN NINETY THE NINETEEN NINETIES FIFTEEN HUNDRED MEN "
                                            "TWO THOUSAND AND FIVE"),
    ("Mr. and Mrs. Lee met Dr. Patel at St. Anne's", "MISTER AND MISSUS LEE MET DOCTOR PATEL AT SAINT ANNE'S"),
])
def test_spoken_normalisation_says_numbers_and_titles_as_words(written, said):
    from voxanon.metrics.text import normalize_spoken

    assert normalize_spoken(written) == said


def test_whisper_digits_score_like_the_spelt_reference():
    from voxanon.metrics.wer import wer

    ref = ["TEN OF CLUBS", "THE LIBRARY HAS MORE THAN TEN THOUSAND BOOKS"]
    hyp = ["10 of clubs.", "The library has more than 10,000 books."]
    assert wer(ref, hyp, "spoken").wer == 0.0
    assert wer(ref, hyp, "vpc").wer > 0     # the VPC's normalisation leaves digits: each counts as an error


@pytest.mark.parametrize("written, words", [
    ("Composez votre numéro d'agent, suivi du dièse [bip].", "composez votre numero d agent suivi du diese"),
    ("¿Está   seguro?  «Sí» — ¡CLARO!", "esta seguro si claro"),
    ("Quell'operatore è già loggato (nota).", "quell operatore e gia loggato"),
    ("ｆｕｌｌ ｗｉｄｔｈ", "full width"),                       # compatibility forms unified
    ("नमस्ते, दुनिया।", "नमस्ते दुनिया"),                         # Devanagari vowel signs are kept
    ("ガギグ、です。", "ガギグ です"),                             # so are Japanese voicing marks
])
def test_basic_normalisation_of_any_language(written, words):
    from voxanon.metrics.text import NORMALIZERS, normalize_basic

    assert normalize_basic(written) == words
    assert NORMALIZERS["basic"] is normalize_basic


def test_languages_written_without_spaces_are_scored_by_character():
    from voxanon.metrics.text import default_normalization, error_unit

    assert [error_unit(lang) for lang in ("zh", "ja", "zh-CN", "en", "fr", "hi")] == ["char"] * 3 + ["word"] * 3
    assert [default_normalization(lang) for lang in ("en", "en-GB", "fr", "ja", "zh")] == [
        "spoken", "spoken", "basic", "basic", "chinese"]


def test_chinese_is_scored_in_one_script():
    from voxanon.metrics.text import NORMALIZERS
    from voxanon.metrics.wer import wer

    # Whisper writes Mandarin speech in traditional characters as often as in simplified ones
    ref, hyp = {"a": "我们 的 会议 推迟 到 下午"}, {"a": "我們的會議推遲到下午。"}
    assert wer(ref, hyp, "basic", unit="char").wer == 40  # 4 of the 10 characters differ in script
    assert wer(ref, hyp, "chinese", unit="char").wer == 0
    assert NORMALIZERS["chinese"]("臺灣，說話") == "台湾 说话"


def test_hindustani_consonants_agree_across_devanagari_and_urdu_script():
    from voxanon.metrics import wer
    from voxanon.metrics.text import normalize_hindustani

    # the same spoken sentences in Devanagari and in Urdu's script (Whisper base writes Hindi speech in the latter)
    assert normalize_hindustani("आज मौसम बहुत अच्छा है।") == normalize_hindustani("آج موسم بہت اچھا ہے") == "j msm bht c h"
    assert normalize_hindustani("बच्चे पार्क में खेल रहे हैं") == normalize_hindustani("بچے پارک میں کھیل رہے ہیں")
    assert normalize_hindustani("ज़रूर फ़िल्म") == "zr flm"                    # nukta letters: Persian sounds
    assert normalize_hindustani("सड़क") == normalize_hindustani("سڑک") == "srk"
    assert normalize_hindustani("नमस्ते") != normalize_hindustani("धन्यवाद")
    assert wer(["आज मौसम बहुत अच्छा है।"], ["آج موسم بہت اچھا ہے"], "hindustani", unit="char").wer == 0.0
