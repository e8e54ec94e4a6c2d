"""The real transcribed speech the B5/B6 models train on, as two Kaldi data directories.

    python experiments/asrbn_real_data.py OUT

``OUT/voices``: the Debian clips of the four speakers no benchmark scores
(alsa, klettres-en, klettres-en-gb, saytime-dawson; 95 clips) — the decoder's
real training voices. ``OUT/prompts``: those plus Asterisk's English prompts
of fewer than five words (143 clips of its speaker), which the real-speech
benchmark never draws (it takes prompts of five words or more) — the
bottleneck recogniser's real speech. The LibriVox and card clips and the
longer prompts stay held out: they are the real test speech.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from voxanon.data.debian_clips import build_real_subset, find_clips, prompt_clips
from voxanon.data.kaldi import write_data_dir

#: speakers of the real-speech benchmark (and the prompts' speaker, whose longer prompts it scores)
HELD_OUT = ("librivox-ss01", "pocketsphinx-cards", "asterisk-allison")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    scored = {c.utt for c in prompt_clips()}
    voices = [c for c in find_clips() if c.speaker not in HELD_OUT]
    short = [c for c in prompt_clips(min_words=1) if c.utt not in scored]
    data, _ = build_real_subset(args.out, voices + short)
    write_data_dir(data.subset([c.utt for c in voices]), args.out / "voices")
    write_data_dir(data, args.out / "prompts")
    print(f"{args.out / 'voices'}: {len(voices)} clips; {args.out / 'prompts'}: {len(data.wav_scp)} clips")


if __name__ == "__main__":
    main()
