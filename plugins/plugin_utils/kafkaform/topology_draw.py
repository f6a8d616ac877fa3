"""The picture of `kafkaform topology`: racks as columns, their hosts inside coloured by role, under
each rack whether it can be lost and why, the cluster's margins in the title (matplotlib, the
topology extra; imported only to draw).

Every artist a reader or a test looks for carries an SVG id: ``rack-<rack>`` (the column's box),
``name-<rack>`` (its name), ``host-<host>`` (a host's box), ``verdict-<rack>`` (the verdict under
a column) and ``title``.
The SVG is reproducible: no date, fixed ids (svg.hashsalt), text kept as text.
"""

from __future__ import annotations

import io
import re
import textwrap

from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Patch

from .topology import NOTHING_THERE, ROLE_NAMES, Rack, Topology

#: A colour per role (colour-blind safe: the Okabe-Ito palette), for the host boxes and legend.
ROLE_COLOURS = {"zookeeper": "#E69F00", "kafka_controller": "#CC79A7",
                "kafka_broker": "#0072B2", "spark_master": "#009E73",
                "spark_worker": "#56B4E9", "monitoring": "#999999"}
CAN_BE_LOST, CANNOT_BE_LOST, NOT_A_RACK = "#1A7F37", "#C62828", "#555555"

# The layout, in inches (the axes span the figure with one data unit per inch).
COLUMN = 2.7
GAP = 0.3
MARGIN = 0.3
HEADER = 0.45
HOST_LINE = 0.2
HOST_PAD = 0.12
HOST_GAP = 0.12
VERDICT_LINE = 0.19
VERDICT_SIZE = 9
#: Characters of verdict text a column's width holds at the verdict's size.
VERDICT_CHARS = 36
TITLE_CHARS = 110


def svg_id(kind: str, name: str) -> str:
    """An SVG id for a rack's or a host's artist: ``rack-lab-a``, ``host-kf-kafka1``."""
    return f"{kind}-{re.sub(r'[^A-Za-z0-9_.-]+', '-', name)}"


def _host_height(roles: int) -> float:
    return HOST_PAD * 2 + HOST_LINE * (1 + roles)


def _column_height(rack: Rack) -> float:
    return HEADER + sum(_host_height(len(h.roles)) + HOST_GAP for h in rack.hosts) + HOST_GAP


def _verdict_lines(layout: Topology, rack: Rack) -> list[tuple[str, str]]:
    """The verdict's lines under a column, each with its colour: an effect the cluster outlives
    green, one it does not red, a note grey."""
    verdict = layout.verdict(rack)
    effects = [(e.text, CAN_BE_LOST if e.held else CANNOT_BE_LOST) for e in verdict.effects]
    if verdict.note:
        effects.append((verdict.note, NOT_A_RACK))
    if not effects:
        effects.append((NOTHING_THERE, CAN_BE_LOST))
    lines = []
    for text, colour in effects:
        wrapped = textwrap.wrap(text, VERDICT_CHARS, break_on_hyphens=False)
        lines += [(("\u2022 " if i == 0 else "   ") + line, colour)
                  for i, line in enumerate(wrapped)]
    if verdict.rules:
        lines.append((f"[{', '.join(verdict.rules)}]", NOT_A_RACK))
    return lines


def _draw_rack(ax: Axes, layout: Topology, rack: Rack, left: float, top: float,
               height: float) -> None:
    box = FancyBboxPatch((left, top - height), COLUMN, height,
                         boxstyle="round,pad=0,rounding_size=0.08", facecolor="#F6F8FA",
                         edgecolor="#57606A", linewidth=1.2)
    box.set_gid(svg_id("rack", rack.name))
    ax.add_patch(box)
    ax.text(left + COLUMN / 2, top - HEADER / 2, rack.name, ha="center", va="center",
            fontsize=12, fontweight="bold", gid=svg_id("name", rack.name))
    y = top - HEADER
    for host in rack.hosts:
        tall = _host_height(len(host.roles))
        colour = ROLE_COLOURS[host.roles[0]] if host.roles else "#FFFFFF"
        inner = FancyBboxPatch((left + 0.15, y - tall), COLUMN - 0.3, tall,
                               boxstyle="round,pad=0,rounding_size=0.05", facecolor=colour,
                               alpha=0.18, edgecolor=colour, linewidth=1.5)
        inner.set_gid(svg_id("host", host.name))
        ax.add_patch(inner)
        line_y = y - HOST_PAD - HOST_LINE / 2
        ax.text(left + 0.27, line_y, host.name, va="center", fontsize=10, fontweight="bold")
        for role in host.roles:
            line_y -= HOST_LINE
            ax.add_patch(FancyBboxPatch((left + 0.3, line_y - 0.05), 0.1, 0.1,
                                        boxstyle="square,pad=0", color=ROLE_COLOURS[role]))
            ax.text(left + 0.48, line_y, ROLE_NAMES[role], va="center", fontsize=9)
        y -= tall + HOST_GAP
    verdict = layout.verdict(rack)
    colour = {True: CAN_BE_LOST, False: CANNOT_BE_LOST, None: NOT_A_RACK}[verdict.can_be_lost]
    line_y = top - height - 0.15
    ax.text(left + COLUMN / 2, line_y, verdict.summary.upper(), ha="center", va="top",
            fontsize=12, fontweight="bold", color=colour, gid=svg_id("verdict", rack.name))
    line_y -= 0.38
    for text, line_colour in _verdict_lines(layout, rack):
        ax.text(left + 0.05, line_y, text, ha="left", va="top", fontsize=VERDICT_SIZE,
                color=line_colour)
        line_y -= VERDICT_LINE


def figure(layout: Topology) -> Figure:
    """The picture of ``layout`` as a matplotlib figure (no pyplot: no global state)."""
    racks = layout.racks
    column_height = max(_column_height(rack) for rack in racks)
    verdict_height = 0.45 + VERDICT_LINE * max(len(_verdict_lines(layout, r)) for r in racks)
    title = textwrap.wrap(f"{layout.cluster}: {layout.margins_text()}", TITLE_CHARS)
    title_height = 0.35 + 0.28 * len(title)
    width = MARGIN * 2 + len(racks) * COLUMN + (len(racks) - 1) * GAP
    height = title_height + column_height + verdict_height + 0.7 + MARGIN
    fig = Figure(figsize=(max(width, 7.0), height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, max(width, 7.0))
    ax.set_ylim(0, height)
    ax.set_axis_off()
    ax.text(MARGIN, height - MARGIN, "\n".join(title), va="top", fontsize=12.5,
            fontweight="bold", gid="title", linespacing=1.4)
    top = height - title_height - 0.1
    for index, rack in enumerate(racks):
        _draw_rack(ax, layout, rack, MARGIN + index * (COLUMN + GAP), top, column_height)
    shown = [role for role in ROLE_NAMES
             if any(role in host.roles for rack in racks for host in rack.hosts)]
    legend = fig.legend(handles=[Patch(color=ROLE_COLOURS[r], label=ROLE_NAMES[r]) for r in shown],
                        loc="lower center", ncol=len(shown), frameon=False, fontsize=9,
                        bbox_to_anchor=(0.5, 0.01))
    legend.set_gid("legend")
    return fig


def render(layout: Topology, file_format: str) -> str | bytes:
    """The picture as SVG text or PNG bytes."""
    # The same SVG on every run: fixed ids, text kept as text, the font matplotlib ships.
    with rc_context({"svg.hashsalt": "kafkaform topology", "svg.fonttype": "none",
                     "font.family": "DejaVu Sans"}):
        buffer = io.BytesIO()
        # No date and no matplotlib version: the same layout gives the same file.
        metadata = ({"Date": None, "Creator": "kafkaform topology"} if file_format == "svg"
                    else {"Software": "kafkaform topology"})
        figure(layout).savefig(buffer, format=file_format, metadata=metadata, dpi=100)
    data = buffer.getvalue()
    return data.decode("utf-8") if file_format == "svg" else data
