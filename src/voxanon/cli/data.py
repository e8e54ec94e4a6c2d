"""``voxanon data``: prepare data sets: the offline corpus (``synth``), conversations of its voices
(``conversations``), SECA's PII test set (``pii``), VPC data from local LibriSpeech and IEMOCAP releases, the
freeware adventure games' speech (``games``), and the
pseudo-speaker pool (``speaker-pool``)."""

from __future__ import annotations

import argparse
import json

from voxanon.cli import group
from voxanon.data.layout import CORPUS_LANGUAGES
from voxanon.ranges import Range


def run_synth(args: argparse.Namespace) -> int:
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


def run_conversations(args: argparse.Namespace) -> int:
    from voxanon.jobs.corpus.conversations import ConversationSettings, build_conversations

    settings = ConversationSettings(conversations=args.conversations, overlaps=tuple(args.overlaps),
                                    min_speakers=args.speakers[0], max_speakers=args.speakers[1],
                                    turns_per_speaker=args.turns, enroll_per_speaker=args.enroll, seed=args.seed)
    desc = build_conversations(args.corpus, args.out, settings, quiet=args.quiet)
    if not args.quiet:
        for rec, info in desc["recordings"].items():
            print(f"{rec}: {len(info['speakers'])} speakers, {info['turns']} turns, {info['duration']:.1f} s, "
                  f"overlap {100 * info['overlap']:.1f} % (asked {100 * info['overlap_target']:.0f} %)")
    return 0


def run_pii(args: argparse.Namespace) -> int:
    from voxanon.jobs.corpus.pii import build_pii_set

    out = build_pii_set(args.out, seed=args.seed, jobs=args.jobs, quiet=args.quiet)
    if not args.quiet:
        print(f"PII test set: {out} (entities in {out / 'entities.jsonl'})")
    return 0


def run_librispeech(args: argparse.Namespace) -> int:
    from voxanon.cli.handlers.shared import INPUT_ERRORS, as_error
    from voxanon.data.librispeech import format_stats, prepare_librispeech

    try:
        stats = prepare_librispeech(args.root, args.out, lists=args.lists, enroll_fraction=args.enroll_fraction,
                                    enroll_utts=args.enroll_utts, seed=args.seed, trials=args.trials)
    except INPUT_ERRORS as exc:
        raise as_error(exc) from None
    print(format_stats(stats))
    return 0


def run_iemocap(args: argparse.Namespace) -> int:
    from voxanon.data import layout
    from voxanon.data.iemocap import prepare_iemocap

    report = prepare_iemocap(args.root, args.out, dev_gender=args.dev_gender)
    print(report.summary())
    print(f"data directories: {args.out}/{layout.IEMOCAP_ALL}, {layout.IEMOCAP_DEV}, {layout.IEMOCAP_TEST}")
    return 0


def run_games(args: argparse.Namespace) -> int:
    from pathlib import Path

    from voxanon.data.games import GAMES
    from voxanon.data.games.write import write_game

    for name in args.game or sorted(GAMES):
        manifest = write_game(GAMES[name].extract(args.cache), Path(args.out) / name, quiet=args.quiet)
        if args.speaker_check:
            from voxanon.jobs.corpus.games_speakers import check_game_speakers

            check_game_speakers(Path(args.out) / name, encoder=args.encoder, test_fraction=args.test_fraction,
                                seed=args.seed, quiet=args.quiet)
        if not args.quiet:
            print(f"{name}: {manifest['clips']} clips, {manifest['hours']:.2f} h, {len(manifest['characters'])} "
                  f"characters, {sum(manifest['unmatched'].values())} clips unmatched, "
                  f"{len(manifest['skipped_undecodable'])} undecodable -> {Path(args.out) / name}")
    return 0


def run_pool(args: argparse.Namespace) -> int:
    from voxanon.jobs.speaker_pool import build_speaker_pool

    pool = build_speaker_pool(args.data_dirs, encoder=args.encoder, level=args.level, max_utts=args.max_utts,
                              device=args.device, cache_dir=args.cache_dir, quiet=args.quiet)
    pool.save(args.out, dtype=args.dtype)
    if not args.quiet:
        n_utt = 0 if pool.utt_embeddings is None else len(pool.utt_embeddings)
        print(f"{args.out}: {len(pool)} speakers (f {int((pool.genders == 'f').sum())} / "
              f"m {int((pool.genders == 'm').sum())}), {n_utt} utterance embeddings, {pool.dim}-d {pool.encoder}")
    return 0


def register(commands) -> None:
    sets = group(commands, "data", "prepare data sets", "SET")

    p = sets.add_parser("synth", help="build the synthetic VPC-shaped benchmark corpus (offline TTS)")
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
    p.set_defaults(handler=run_synth)

    p = sets.add_parser("conversations", help="conversations of two to four speakers mixed from a built corpus's "
                                              "dev/test voices and real clips, with reference RTTM and transcripts")
    p.add_argument("corpus", help="a corpus folder built by `voxanon data synth`")
    p.add_argument("out", help="output folder (data/conversations, data/enrolls, wav/, conversations.json)")
    p.add_argument("--conversations", type=Range(1).option(int), default=12, help="how many (default 12)")
    p.add_argument("--speakers", type=Range(2).option(int), nargs=2, default=(2, 4), metavar=("MIN", "MAX"),
                   help="speakers per conversation (default 2 4)")
    p.add_argument("--overlaps", type=Range(0, 1, hi_open=True).option(float), nargs="+", default=(0.0, 0.1, 0.2),
                   metavar="RATIO", help="overlap ratios the conversations cycle through: time where two talk over "
                                         "speech time (default 0 0.1 0.2)")
    p.add_argument("--turns", type=Range(1).option(int), default=3, help="turns per speaker, at most (default 3)")
    p.add_argument("--enroll", type=Range(1).option(int), default=2,
                   help="held-out enrollment utterances per speaker (default 2)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(handler=run_conversations)

    p = sets.add_parser("pii", help="synthesise the PII-rich test set of SECA (shipped CC0 sentences with "
                                    "names, places, organisations; Kokoro voices; entity spans)")
    p.add_argument("out", help="output folder (data/pii and wav/pii under it)")
    p.add_argument("--seed", type=int, default=0, help="seed of the voice drawn for each sentence")
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(handler=run_pii)

    d = sets.add_parser("librispeech", help="VPC LibriSpeech enrollment/trial sets and train-clean-360")
    d.add_argument("root", help="folder holding LibriSpeech's subsets (dev-clean, test-clean, train-clean-360)")
    d.add_argument("out", help="output folder for the data directories")
    d.add_argument("--lists", help="folder with official VPC lists (libri_dev_enrolls/enrolls, .../trials)")
    d.add_argument("--enroll-fraction", type=Range(0, 1, lo_open=True).option(float), default=0.75,
                   help="enrolled share of each gender's speakers, in (0, 1]")
    d.add_argument("--enroll-utts", type=Range(1).option(int), default=12,
                   help="enrollment utterances per enrolled speaker (>= 1)")
    d.add_argument("--trials", choices=("vpc", "paper"), default="vpc",
                   help="trial construction without --lists: vpc (every enrolled speaker against every same-gender "
                        "trial utterance) or paper ('Anonymization, Not Elimination': per enrollment utterance 2 "
                        "target and 2 non-target trials, one female and one male impostor; 5-15 s utterances only)")
    d.add_argument("--seed", type=int, default=0)
    d.set_defaults(handler=run_librispeech)

    p = sets.add_parser("iemocap", help="prepare IEMOCAP for the VPC 5-fold SER protocol")
    p.add_argument("root", help="IEMOCAP release folder holding Session1..Session5")
    p.add_argument("out", help="output folder for IEMOCAP_all, IEMOCAP_dev and IEMOCAP_test")
    p.add_argument("--dev-gender", choices=("f", "m"), default="f",
                   help="which speaker of each session goes to the development set (default: f)")
    p.set_defaults(handler=run_iemocap)

    p = sets.add_parser("games", help="real transcribed speech of the freeware games Flight of the Amazon Queen and "
                                      "Drascula (the Debian packages tools/setup.sh unpacks): a Kaldi directory "
                                      "per game under OUT, speakers by character")
    p.add_argument("out", help="output folder (OUT/queen, OUT/drascula)")
    p.add_argument("--game", action="append", choices=("drascula", "queen"),
                   help="only this game (repeatable; default both)")
    p.add_argument("--cache", default=None,
                   help="where set-up unpacked the packages (default $VOXANON_GAMES_DIR or ~/.cache/voxanon/games)")
    p.add_argument("--speaker-check", action="store_true",
                   help="afterwards embed each character's clips (a speaker encoder), record in the manifest "
                        "which characters may share an actor, and write train/test subsets that keep each such "
                        "group on one side")
    p.add_argument("--encoder", default="ge2e", help="speaker encoder for --speaker-check (default ge2e)")
    p.add_argument("--test-fraction", type=Range(0, 1, lo_open=True, hi_open=True).option(float), default=0.2,
                   help="share of the clips the test subset aims at (default 0.2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the order actor groups are drawn for test")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(handler=run_games)

    p = sets.add_parser("speaker-pool", help="embed the speakers of data directories into a pseudo-speaker "
                                             "pool (.npz)")
    p.add_argument("data_dirs", nargs="+", metavar="DATA_DIR", help="Kaldi data directories (utt2spk, spk2gender)")
    p.add_argument("--out", required=True, help="output .npz")
    p.add_argument("--encoder", default="ge2e", help="speaker encoder spec (default ge2e)")
    p.add_argument("--level", choices=("speaker", "utterance"), default="speaker",
                   help="'utterance' also keeps every utterance's embedding (the flow trains on them)")
    p.add_argument("--max-utts", type=int, default=None, help="use at most this many utterances per speaker")
    p.add_argument("--dtype", choices=("float32", "float16"), default="float32", help="storage type")
    p.add_argument("--device", default="cpu")
    p.add_argument("--cache-dir", default=None, help="embedding cache folder (reused by later runs)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(handler=run_pool)
