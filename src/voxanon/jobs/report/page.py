"""The benchmark report: one self-contained HTML file (figures and audio inlined).

The page needs no server and no network: every image is a PNG data URI and every
audio player a WAV data URI. A small inline script checks, once the page has
loaded, that every image decoded and every audio element loaded its metadata,
and writes the verdict into ``#load-check`` (read by the browser test).
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any, Iterable, Sequence

from voxanon.atomic import write_text

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1200px;
color:#1b1b1b;line-height:1.45;padding:0 1em}
h1{margin-bottom:.2em} h2{border-bottom:2px solid #1f3b73;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:1em 0;font-size:.9em} th,td{border:1px solid #ccd;padding:.3em .6em;
text-align:right} th{background:#eef1f8} td:first-child,th:first-child{text-align:left}
.banner{background:#fff4ce;border:1px solid #e0b400;padding:.8em 1em;border-radius:6px;margin:1em 0}
.figs{display:flex;flex-wrap:wrap;gap:1em} .figs figure{margin:0;flex:1 1 480px}
.figs img{max-width:100%;border:1px solid #dde} figcaption{font-size:.85em;color:#555}
.listen{overflow-x:auto} .listen td{text-align:center;vertical-align:top} audio{width:190px}
.small{font-size:.85em;color:#555} pre{background:#f6f7f9;padding:1em;overflow:auto;font-size:.8em}
"""

_LOAD_CHECK = """
<script>
window.addEventListener('load', function () {
  var problems = [];
  var imgs = document.querySelectorAll('img');
  imgs.forEach(function (im) { if (!im.complete || im.naturalWidth === 0) problems.push('img:' + im.alt); });
  var audios = Array.prototype.slice.call(document.querySelectorAll('audio'));
  var pending = audios.length;
  function finish() {
    var el = document.getElementById('load-check');
    el.setAttribute('data-status', problems.length ? 'failed' : 'ok');
    el.setAttribute('data-images', imgs.length); el.setAttribute('data-audio', audios.length);
    el.textContent = problems.length ? 'not loaded: ' + problems.join(', ')
      : imgs.length + ' figures and ' + audios.length + ' audio clips loaded';
  }
  if (!pending) { finish(); return; }
  audios.forEach(function (a) {
    var done = false;
    function settle(ok) { if (done) return; done = true; if (!ok) problems.push('audio:' + a.title);
      if (--pending === 0) finish(); }
    if (a.readyState >= 1) { settle(true); return; }
    a.addEventListener('loadedmetadata', function () { settle(true); });
    a.addEventListener('error', function () { settle(false); });
    a.load();
  });
});
</script>
"""


def _data_uri(path: Path, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def fmt(value: Any, digits: int = 2) -> str:
    """A number for a table cell ('–' when missing)."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return "–" if value != value else f"{value:.{digits}f}"
    return html.escape(str(value))


def fmt_ci(value: float | None, ci: Sequence[float] | None, digits: int = 2) -> str:
    """``value [lo, hi]`` for a table cell."""
    if value is None:
        return "–"
    if not ci:
        return fmt(value, digits)
    return f"{value:.{digits}f} <span class='small'>[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]</span>"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """An HTML table; cells are already-escaped HTML."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figure(path: Path, caption: str) -> str:
    """An inlined PNG figure with its caption (and a link to the SVG beside it)."""
    svg = path.with_suffix(".svg").name
    return (f"<figure><img alt='{html.escape(path.stem)}' src='{_data_uri(path, 'image/png')}'>"
            f"<figcaption>{html.escape(caption)} <a href='figures/{svg}'>SVG</a></figcaption></figure>")


def audio(path: Path, title: str) -> str:
    """An inlined WAV audio player."""
    return f"<audio controls preload='metadata' title='{html.escape(title)}' src='{_data_uri(path, 'audio/wav')}'></audio>"


def write_report(path: Path, *, title: str, banner: str | None, sections: Sequence[tuple[str, str]],
                 results: dict[str, Any]) -> Path:
    """Write the HTML page: a title, an optional banner, (heading, html) sections and the raw results."""
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>",
             "<p id='load-check' class='small' data-status='pending'>checking figures and audio…</p>"]
    if banner:
        parts.append(f"<div class='banner'>{banner}</div>")
    for heading, body in sections:
        anchor = heading.lower().replace(" ", "-")
        parts.append(f"<h2 id='{html.escape(anchor)}'>{html.escape(heading)}</h2>{body}")
    parts.append("<h2>Raw results</h2><details><summary>results.json</summary><pre>"
                 + html.escape(json.dumps(results, indent=1, default=str)[:200_000]) + "</pre></details>")
    parts.append(_LOAD_CHECK + "</body></html>")
    write_text(path, "".join(parts))
    return path
