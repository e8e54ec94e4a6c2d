

def test_words_normalisation_removes_all_punctuation_but_apostrophes():
    from voxanon.metrics.text import NORMALIZERS, normalize_words

    assert normalize_words("ill-disposed; “yes”: it’s O'Brien.") == "ILL DISPOSED YES IT'S O'BRIEN"
    assert NORMALIZERS["words"] is normalize_words
    # agrees with the VPC normalisation on text that has only VPC punctuation
    assert normalize_words("Hello, world! Is it? Yes.") == NORMALIZERS["vpc"]("Hello, world! Is it? Yes.")
