"""Every script the documents name (a ``*.py`` or ``*.sh`` path in README.md, BENCHMARKS.md or docs/) is in
this repository, so that a reader can run what a result cites.

A name counts as found where it is a path from the repository root, from ``src/voxanon`` (the docs write
``jobs/benchmark/run.py``), or from the document's own folder, or where it ends a path of a file in the
repository (a bare ``bench_ltf.py`` beside a full ``experiments/bench_ltf.py``). Files of other projects that
the documents describe are listed in :data:`OTHER_PROJECTS`.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: the repository's folders that hold scripts and sources
CODE_FOLDERS = ("src", "tests", "experiments", "tools", ".ci")
#: a path or a file name ending in .py or .sh (``::`` or punctuation may follow it)
SCRIPT = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:py|sh))(?![\w/-])")
#: files of other projects that the documents describe (with the project they belong to)
OTHER_PROJECTS = {
    # the VoicePrivacy Challenge kits (docs/vpc.md)
    "01_download_data_model.sh", "01_download_data_model_track1.sh", "run_anonymization.py", "run_evaluation.py",
    "train_asv_eval.py", "asv_train/train_speaker_embeddings_ssl_ft.py", "..._ssl_ft.py",
    "asv_train/libri_prepare.py", "libri_prepare.py", "asv_train/asv_dataset.py", "asv_dataset.py",
    "utils/path_management.py",
    # microsoft/unilm's WavLM reference implementation (docs/models.md)
    "WavLM.py",
}


def repository_files() -> list[str]:
    """Paths (from the root, ``/``-separated) of every file in the code folders."""
    return [p.relative_to(ROOT).as_posix() for folder in CODE_FOLDERS for p in (ROOT / folder).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts]


def missing_scripts(doc: Path, text: str, files: list[str]) -> list[str]:
    """``doc:line: name`` for each script name in ``text`` that is not in the repository."""
    known = set(files)
    missing = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in SCRIPT.finditer(line):
            name = match.group(1)
            if name in OTHER_PROJECTS or name in known or f"src/voxanon/{name}" in known:
                continue
            if (doc.parent / name).is_file() or any(f.endswith("/" + name) for f in files):
                continue
            missing.append(f"{doc.relative_to(ROOT)}:{number}: {name}")
    return missing


def test_every_script_a_document_names_is_in_the_repository():
    files = repository_files()
    missing = [m for doc in DOCS for m in missing_scripts(doc, doc.read_text(encoding="utf-8"), files)]
    assert not missing, "scripts the documents name that are not in the repository (commit them, or say in " \
                        "words what was run):\n" + "\n".join(missing)


def test_a_script_that_is_not_committed_is_reported():
    files = ["experiments/bench_ltf.py", "src/voxanon/jobs/benchmark/run.py"]
    text = ("Run `python experiments/bench_ltf.py` (or `bench_ltf.py`), see `jobs/benchmark/run.py`\n"
            "and `tests/x.py::test_y`; then `python vproj.py raw` and `experiments/bench_gone.py`.")
    assert missing_scripts(ROOT / "docs" / "x.md", text, files) == [
        "docs/x.md:2: tests/x.py", "docs/x.md:2: vproj.py", "docs/x.md:2: experiments/bench_gone.py"]
