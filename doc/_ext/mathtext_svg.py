"""Render the maths of the HTML pages at build time, as inline SVG.

Formulas (the ``:math:`` role and the ``.. math::`` directive, in the pages
and in the docstrings) are typeset by matplotlib's mathtext and written into
the page as SVG paths. The pages load no script and need no network, neither
to build nor to read, and no LaTeX installation is needed: matplotlib is
already needed for the figures.

mathtext reads a subset of LaTeX
(https://matplotlib.org/stable/users/explain/text/mathtext.html): no
environments, ``\\bigl``/``\\bigr`` (use ``\\left``/``\\right``), ``\\ge``
(use ``\\geq``) or ``\\mathrel``. A formula it cannot read is a build warning
(an error with ``-W``) and is shown as its LaTeX source.

The glyphs are filled with ``currentColor``, so formulas take the colour of
the text around them (light and dark themes alike), and are sized in ``em``,
so they follow the font size of the text around them. The LaTeX source is the
accessible name and the tooltip of each formula.

Configuration (``conf.py``):

``mathtext_svg_fontset``
    mathtext font set: ``"cm"`` (Computer Modern, as LaTeX; default),
    ``"stix"``, ``"stixsans"``, ``"dejavusans"``, ``"dejavuserif"``.
``mathtext_svg_scale``
    size of the maths relative to the surrounding text (default 1.1:
    Computer Modern looks small beside sans-serif text of the same size).
"""

import re
from functools import lru_cache
from html import escape

from docutils import nodes
from matplotlib.font_manager import FontProperties
from matplotlib.mathtext import MathTextParser
from matplotlib.path import Path
from matplotlib.textpath import TextPath
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

# Font size the formulas are typeset at: user units of the SVG per em.
_EM = 100.0
_SVG_COMMANDS = {
    Path.MOVETO: "M",
    Path.LINETO: "L",
    Path.CURVE3: "Q",
    Path.CURVE4: "C",
    Path.CLOSEPOLY: "Z",
}
_LINE_BREAK = re.compile(r"\\\\(?:\[[^\]]*\])?")
# mathtext sets the limits of these operators above and below them; in text
# (inline) maths LaTeX sets them to the side, which a group ``{\sum}_k`` does.
_LIMITS_OPERATOR = re.compile(
    r"(\\(?:sum|prod|coprod|bigcap|bigcup|bigsqcup|bigvee|bigwedge|bigodot"
    r"|bigotimes|bigoplus|biguplus|lim|liminf|limsup|sup|max|min))(?![A-Za-z])"
    r"(?=\s*[_^])"
)


def _number(value):
    text = f"{value:.1f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def _path_data(path, ascent):
    """SVG path data of a matplotlib path, with y pointing down from `ascent`."""
    out = []
    for vertices, code in path.iter_segments(simplify=False, curves=True):
        command = _SVG_COMMANDS[code]
        if command == "Z":
            out.append("Z")
            continue
        coords = []
        for x, y in vertices.reshape(-1, 2):
            coords.append(_number(x))
            coords.append(_number(ascent - y))
        out.append(command + " ".join(coords))
    return "".join(out)


@lru_cache(maxsize=None)
def render(latex, fontset="cm"):
    """Typeset one formula; return ``(width, height, depth, path_data)``.

    Lengths are in SVG user units, ``100`` per em; `depth` is how far the
    formula reaches below the baseline. Raises ValueError if mathtext cannot
    read `latex`.
    """
    text = "$" + " ".join(latex.split()) + "$"
    prop = FontProperties(size=_EM, math_fontfamily=fontset)
    width, height, depth, _glyphs, _rects = MathTextParser("path").parse(
        text, 72, prop
    )
    path = TextPath((0, 0), text, size=_EM, prop=prop)
    return float(width), float(height), float(depth), _path_data(path, height - depth)


def _svg(latex, config, style="", source=None):
    width, height, depth, data = render(latex, config.mathtext_svg_fontset)
    scale = config.mathtext_svg_scale / _EM
    label = escape(" ".join((latex if source is None else source).split()), quote=True)
    return (
        '<svg class="math" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'aria-label="{label}" viewBox="0 0 {_number(width)} {_number(height)}" '
        f'style="width:{width * scale:.3f}em;height:{height * scale:.3f}em;'
        f'vertical-align:{-depth * scale:.3f}em;overflow:visible{style}">'
        f'<title>{label}</title><path fill="currentColor" d="{data}"/></svg>'
    )


def _render_or_warn(self, node, latex, style="", source=None):
    try:
        return _svg(latex, self.builder.config, style, source)
    except ValueError as exc:
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else exc
        logger.warning(
            "matplotlib's mathtext cannot typeset %r: %s", latex, reason,
            location=node, type="mathtext_svg",
        )
        return f'<code class="math">{escape(latex)}</code>'


def html_visit_math(self, node):
    source = node.astext()
    latex = _LIMITS_OPERATOR.sub(r"{\1}", source)
    self.body.append(_render_or_warn(self, node, latex, source=source))
    raise nodes.SkipNode


def html_visit_displaymath(self, node):
    # one line per equation (separated by blank lines) and per ``\\``;
    # the alignment marks ``&`` of several lines are dropped
    lines = []
    for part in re.split(r"\n\s*\n", node.astext()):
        for line in _LINE_BREAK.split(part):
            line = re.sub(r"(?<!\\)&", " ", line).strip()
            if line:
                lines.append(line)
    self.body.append(
        self.starttag(node, "div", CLASS="math", style="margin-bottom:1em")
    )
    if node.get("number"):
        number = get_node_equation_number(self, node)
        self.body.append(f'<span class="eqno">({number})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    self.body.append(
        '<div class="math-display" style="flex-grow:1;min-width:0;'
        'overflow-x:auto;overflow-y:hidden;padding:0.25em 0">'
    )
    for line in lines:
        self.body.append(
            _render_or_warn(self, node, line, ";display:block;margin:0.2em auto")
        )
    self.body.append("</div></div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_config_value("mathtext_svg_fontset", "cm", "html", types=(str,))
    app.add_config_value("mathtext_svg_scale", 1.1, "html", types=(float, int))
    app.add_html_math_renderer(
        "mathtext_svg",
        inline_renderers=(html_visit_math, None),
        block_renderers=(html_visit_displaymath, None),
    )
    return {"parallel_read_safe": True, "parallel_write_safe": True}
