import json

import pytest
import soundfile as sf

from voxanon.data.debian_clips import attributions, build_real_subset, find_clips
from voxanon.data.kaldi import read_data_dir, write_data_dir

CLIPS = find_clips()
needs_clips = pytest.mark.skipif(not CLIPS, reason="no Debian speech clips installed (alsa-utils, "
                                 "pocketsphinx-testdata, asterisk-core-sounds-en-wav, saytime, klettres-data)")


@needs_clips
def test_clips_have_exact_texts_and_attribution():
    packages = attributions()
    assert len({c.utt for c in CLIPS}) == len(CLIPS)
    for c in CLIPS:
        assert c.path.is_file() and c.package in packages
        assert c.text and c.text == c.text.upper() and all(ch.isalpha() or ch in " '" for ch in c.text)
        assert c.utt.startswith(c.speaker + "-")
    for info in packages.values():
        assert info["licence"] and info["copyright"]
    by_stem = {c.path.stem: c.text for c in CLIPS}
    if "Front_Left" in by_stem:
        assert by_stem["Front_Left"] == "FRONT LEFT"
    if "sense_and_sensibility_01_austen_64kb-0880" in by_stem:
        assert by_stem["sense_and_sensibility_01_austen_64kb-0880"] == "HE WAS NOT AN ILL DISPOSED YOUNG MAN"


@needs_clips
def test_real_subset_is_a_valid_labelled_data_dir(tmp_path):
    picked = {}
    for c in CLIPS:
        picked.setdefault(c.speaker, []).append(c)
    clips = [c for group in picked.values() for c in group[:2]]
    data, info = build_real_subset(tmp_path, clips)
    write_data_dir(data, tmp_path / "data/real")
    back = read_data_dir(tmp_path / "data/real")
    assert sorted(back.utts) == sorted(c.utt for c in clips)
    for utt, path in back.wav_scp.items():
        assert sf.info(path).samplerate == 16000 and path.startswith(str(tmp_path / "wav/real"))
    assert info["synthetic"] is False and set(info["speakers"]) == set(picked)
    assert set(info["packages"]) == {c.package for c in clips}
    assert all(g in ("f", "m") for g in back.spk2gender.values())
    json.dumps(info)
    again, _ = build_real_subset(tmp_path, clips)  # reuses the converted files
    assert again.utt2dur == data.utt2dur


def test_prompt_clips_keep_whole_sentences_with_their_transcripts(tmp_path):
    import gzip

    from voxanon.data.debian_clips import prompt_clips

    doc = tmp_path / "usr/share/doc/asterisk-core-sounds-en"
    sounds = tmp_path / "usr/share/asterisk/sounds/en"
    doc.mkdir(parents=True)
    sounds.mkdir(parents=True)
    listing = ["; Core Asterisk Sounds in English", "",
               "agent-pass: Please enter your password followed by the pound key.",
               "beep: [this is a simple beep tone]",
               "conf-adminmenu: Please press 1 to mute or unmute yourself.",
               "calling: Calling.",
               "no-file: There is no recording of this prompt at all."]
    with gzip.open(doc / "core-sounds-en.txt.gz", "wt") as fh:
        fh.write("\n".join(listing) + "\n")
    for name in ("agent-pass", "beep", "conf-adminmenu", "calling"):
        sf.write(sounds / f"{name}.wav", [0.0] * 800, 8000)
    (clip,) = prompt_clips(tmp_path)          # digits, sound notes, short prompts and missing files left out
    assert clip.text == "PLEASE ENTER YOUR PASSWORD FOLLOWED BY THE POUND KEY"
    assert clip.speaker == "asterisk-allison" and clip.path == sounds / "agent-pass.wav"
    assert prompt_clips(tmp_path / "elsewhere") == []


def test_prompt_clips_in_other_languages_keep_their_text_as_written(tmp_path):
    import gzip

    from voxanon.data.debian_clips import prompt_clips

    doc = tmp_path / "usr/share/doc/asterisk-core-sounds-fr"
    sounds = tmp_path / "usr/share/asterisk/sounds/fr"
    doc.mkdir(parents=True)
    sounds.mkdir(parents=True)
    with gzip.open(doc / "core-sounds-fr.txt.gz", "wt", encoding="utf-8") as fh:
        fh.write("agent-loggedoff: Vous n'êtes   plus en ligne.\nagent-pass: Composez votre mot de passe.\n")
    sf.write(sounds / "agent-loggedoff.wav", [0.0] * 800, 8000)
    (clip,) = prompt_clips(tmp_path, language="fr")
    assert clip.text == "Vous n'êtes plus en ligne." and clip.language == "fr"
    assert clip.utt == "asterisk-june-agent-loggedoff" and clip.package == "asterisk-core-sounds-fr-wav"
    assert prompt_clips(tmp_path, language="es") == []
    with pytest.raises(ValueError, match="not 'de'"):
        prompt_clips(tmp_path, language="de")
