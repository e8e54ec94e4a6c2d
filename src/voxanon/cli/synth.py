"""``voxanon data synth``: build the synthetic VPC-shaped benchmark corpus."""

from __future__ import annotations

import argparse
import json

from voxanon.data.layout import CORPUS_LANGUAGES


def run(args: argparse.Namespace) -> int:
    from voxanon.jobs.corpus.build import build_corpus

    size = args.size or ("default" if args.engine == "kokoro" else "small")
    desc = build_corpus(args.out, size=size, seed=args.seed, jobs=args.jobs, quiet=args.quiet,
                        real=not args.no_real, engine=args.engine, topics=args.topics, emotion=args.emotion,
                        language=args.language, accented=args.accented)
    if not args.quiet:
        for name, stats in desc["sets"].items():
            trials = stats.get("trials")
            extra = f", trials {trials['target']} target / {trials['nontarget']} non-target" if trials else ""
            print(f"{name}: speakers f/m {stats['speakers']['f']}/{stats['speakers']['m']}, "
                  f"utterances {sum(stats['utterances'].values())}, {stats['hours'] * 60:.1f} min{extra}")
    if args.check:
        from voxanon.jobs.corpus.check import check_separability

        print(json.dumps(check_separability(args.out, encoder=args.encoder, quiet=args.quiet), indent=1))
    return 0


def run_pii(args: argparse.Namespace) -> int:
    from voxanon.jobs.corpus.pii import build_pii_set

    out = build_pii_set(args.out, seed=args.seed, jobs=args.jobs, quiet=args.quiet)
    if not args.quiet:
        print(f"PII test set: {out} (entities in {out / 'entities.jsonl'})")
    return 0


def register(commands) -> None:
    p = commands.data.add_parser("synth", help="build the synthetic VPC-shaped benchmark corpus (offline TTS)")
    p.add_argument("out", help="output folder")
    p.add_argument("--engine", choices=("kokoro", "formant"), default="kokoro",
                   help="speakers from Kokoro-82M voice packs and their mixtures (default), or Debian's "
                        "espeak-ng/flite/festival voices times vocal-tract warps")
    p.add_argument("--size", choices=("tiny", "small", "default", "large"), default=None,
                   help="corpus size (kokoro: tiny/small/default/large, default 'default'; "
                        "formant: small/default/large, default 'small')")
    p.add_argument("--language", choices=CORPUS_LANGUAGES, default="en",
                   help="the language spoken (kokoro; default en): dev/test speakers are that language's Kokoro "
                        "packs (es 1 female / 2 male, fr 1 / 0, it 1 / 1, zh 4 / 4, ja 4 / 1), their same-gender "
                        "mixtures and vocal-tract warps, train/emo speakers the other packs reading it, sentences "
                        "Asterisk's prompt texts (CC-BY-SA-3.0; data/real adds its recorded prompts) or, in zh and "
                        "ja, sentences written for voxanon (CC0; no recorded speech); a gender without a pack has "
                        "no dev/test speakers (French: female trials only)")
    p.add_argument("--accented", action="store_true",
                   help="with --language: fill dev and test up to the size's speaker count with other languages' "
                        "Kokoro voices reading the language (a seeded half of them and their mixtures; the "
                        "training side keeps the other half), so that every gender has that many speakers")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--no-real", action="store_true",
                   help="skip the real-speech subsets: Debian's clips (data/real) and EmoFilm's emotional clips")
    p.add_argument("--emotion", choices=("auto", "emofilm", "styles"), default="auto",
                   help="the emo set: EmoFilm's real emotional clips (Spanish film dubs; anger, happiness, "
                        "sadness; the wheel tools/setup.sh fetches) or the TTS voices' acted prosodic styles (a "
                        "smoke test: F0, rate and loudness only); auto: EmoFilm when fetched, unless --no-real")
    p.add_argument("--topics", action="store_true",
                   help="each dev/test/train speaker reads sentences of one of 12 topics only (as a LibriSpeech "
                        "reader reads one book), so that transcripts identify speakers: the corpus for content "
                        "privacy (C-EER); the emo set is unchanged")
    p.add_argument("--check", action="store_true",
                   help="afterwards, measure speaker separability (OO EER of a speaker encoder on the trials) "
                        "and how close dev/test speakers come to training speakers")
    p.add_argument("--encoder", default="ge2e", help="speaker encoder for --check")
    p.set_defaults(handler=run)
    p = commands.data.add_parser("pii", help="synthesise the PII-rich test set of SECA (shipped CC0 sentences with "
                                             "names, places, organisations; Kokoro voices; entity spans)")
    p.add_argument("out", help="output folder (data/pii and wav/pii under it)")
    p.add_argument("--seed", type=int, default=0, help="seed of the voice drawn for each sentence")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(handler=run_pii)
