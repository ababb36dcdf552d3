"""The report's HTML: one Jinja2 template, its CSS and JavaScript inlined, the data embedded once as JSON.

Jinja2 escapes every value put into the page (bot names come from users) and
its ``tojson`` filter makes JSON safe inside a ``<script>`` element; the
charts are SVG drawn by the page's own small script, so the file needs
nothing from the network.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from importlib.resources import files
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from skyjo_ref.report.data import ReportOptions, collect, single_game
from skyjo_ref.tournament.tables import json_safe


def _static(name: str) -> Markup:
    text = files("skyjo_ref.report").joinpath("static", name).read_text(encoding="utf-8")
    if "</script" in text.lower() or "</style" in text.lower():  # would end the inline element early
        raise ValueError(f"{name} may not contain a closing script or style tag")
    return Markup(text)


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("skyjo_ref.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.policies["json.dumps_kwargs"] = {"sort_keys": False, "separators": (",", ":"), "allow_nan": False}
    return env


def _version() -> str:
    try:
        return version("skyjo-ref")
    except PackageNotFoundError:
        return "dev"


def render(data: Mapping[str, Any], single: bool = False) -> str:
    """The HTML page for report ``data`` (see :mod:`skyjo_ref.report.data`)."""
    template = _environment().get_template("report.html.j2")
    return template.render(
        data=json_safe(data),
        single=single,
        version=_version(),
        css=_static("report.css"),
        viewer_js=_static("viewer.js"),
        report_js=_static("report.js"),
    )


def write_report(folder: Path, output: Path, options: ReportOptions | None = None) -> dict[str, Any]:
    """Write the report of the store in ``folder`` to ``output``; returns the data it embeds.

    Records the page does not carry are opened from the store's ``games/``
    folder, found relative to where the report is written.
    """
    data = collect(folder, options)
    records = (folder / data["records_dir"]).resolve()
    data["records_dir"] = Path(os.path.relpath(records, output.resolve().parent)).as_posix()
    _write(output, render(data))
    return data


def write_game(record: Mapping[str, Any], name: str, output: Path) -> None:
    """Write the viewer of one record (``skyjo-ref replay --html``)."""
    _write(output, render(single_game(record, name), single=True))


def _write(output: Path, text: str) -> None:
    tmp = output.with_name(output.name + ".tmp")
    try:  # whole or not at all: an interrupted write leaves neither a half page nor its .tmp
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, output)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
