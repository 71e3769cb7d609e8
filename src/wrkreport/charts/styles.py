"""Chart styles: each setup's colour, marker and bar hatch, the change chart's marks, and the contrast rule they meet.

Colours are the Okabe-Ito palette (distinct for the common colour-vision deficiencies)
and every setup also has its own marker and bar hatch, so the charts read in grey print;
every bar fill has at least 3:1 contrast against the white page (WCAG 1.4.11).
"""

from __future__ import annotations

from ..core.setups import split_twin

# Okabe & Ito (2008), "Color Universal Design"; marker and hatch per setup for grey print.
SETUP_STYLES = {
    "go-http": ("#000000", "o", ""),
    "nginx-http": ("#0072B2", "s", "//"),
    "nginx-fcgi-tcp": ("#D55E00", "^", "xx"),
    "nginx-fcgi-unix": ("#009E73", "D", ".."),
    "nginx-http-unix": ("#56B4E9", "v", "\\\\"),
    "go-fasthttp": ("#CC79A7", "P", "--"),
    "nginx-static": ("#E69F00", "X", "++"),
    "node-http": ("#7A6500", "h", "oo"),  # Okabe & Ito's yellow, darkened to 3:1 against white
    # The TLS setups, in Tol's colour-blind-safe grey, indigo and wine; each -new
    # setup (a handshake per request) keeps its keep-alive twin's colour, with a marker and hatch of its own.
    "go-https": ("#555555", "8", "**"),
    "nginx-https": ("#332288", "d", "||"),
    "nginx-https-unix": ("#882255", "H", "\\\\||"),
    "go-https-new": ("#555555", "1", "OO"),
    "nginx-https-new": ("#332288", "2", "|."),
    "nginx-https-unix-new": ("#882255", "3", "-."),
    # The h2 setups, in Tol's green, teal and purple; each -mux setup (more streams per
    # connection) keeps its twin's colour, with a marker and hatch of its own.
    "go-h2": ("#117733", "x", "*"),
    "nginx-h2": ("#1D6E67", "|", "|"),
    "nginx-h2-unix": ("#AA4499", "_", "\\\\--"),
    "go-h2-mux": ("#117733", 6, "**."),  # carets (matplotlib's 4-7): the shapes left once the references' are taken
    "nginx-h2-mux": ("#1D6E67", 4, "||."),
    "nginx-h2-unix-mux": ("#AA4499", 5, "-\\"),
    "app": ("#000000", "4", "/"),
    "nginx-app": ("#0072B2", "+", "x"),  # --app's: Go's colours for the same connection (app: the baseline's)
    "nginx-app-unix": ("#56B4E9", "x", "\\"),
    "nginx-app-fcgi-tcp": ("#D55E00", "|", "x."),
    "nginx-app-fcgi-unix": ("#009E73", "_", "."),
    # The other front ends (HAProxy, Caddy, Apache httpd): a colour per front end, the marker of nginx's setup of the same connection, and its
    # hatch with a stroke of the front end's own (each bar reads apart in grey print).
    **{
        f"{front}-{kind}": (colour, marker, hatch + stroke)
        for front, colour, stroke in (("haproxy", "#8C510A", "-"), ("caddy", "#6A3D9A", "+"), ("apache", "#B2182B", "|"))
        for kind, marker, hatch in (("http", "s", "//"), ("fcgi-tcp", "^", "xx"), ("fcgi-unix", "D", ".."))
    },
}
OTHER_STYLE = ("#777777", "*", "//..")
VARIANT_HATCH = "oo"  # added to its original's hatch for a --variant twin (ORIGINAL~NAME)
MIN_CONTRAST = 3.0  # WCAG 1.4.11 for graphical objects: every fill against the white page
# How the change chart draws each kind of change: (colour, marker, filled, legend label); {band} is the no-change band.
CHANGE_STYLES = {
    "better": ("#009E73", "P", True, "better in B"),
    "worse": ("#D55E00", "X", True, "worse in B"),
    "same": ("#000000", "o", True, "no change (within {band})"),
    "inconclusive": ("#555555", "o", False, "inconclusive (includes 1.0)"),
    "no-interval": ("#555555", "D", False, "no interval (< 2 repeats)"),
}


def contrast(colour: str, background: str = "#ffffff") -> float:
    """Return the WCAG contrast ratio of two #rrggbb colours.

    >>> round(contrast("#000000"), 1), round(contrast("#777777"), 2)
    (21.0, 4.48)
    """

    def luminance(hex_colour: str) -> float:
        channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted((luminance(colour), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def fill(colour: str) -> str:
    """Return a bar's fill: the setup's colour, darkened just enough for 3:1 against the white page (black as mid grey, so whiskers show)."""
    if colour == "#000000":
        return "#666666"
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    factor = 1.0
    while contrast("#{:02x}{:02x}{:02x}".format(*(round(c * factor) for c in (r, g, b)))) < MIN_CONTRAST:
        factor -= 0.02
    return "#{:02x}{:02x}{:02x}".format(*(round(c * factor) for c in (r, g, b)))


def setup_style(setup: str) -> tuple[str, str, str]:
    """Return (colour, marker, hatch) of a setup; a --variant twin ('nginx-http~nokeep') its original's colour and marker, its hatch crossed with circles."""
    original, variant = split_twin(setup)
    if variant and original in SETUP_STYLES:
        colour, marker, hatch = SETUP_STYLES[original]
        return colour, marker, hatch + VARIANT_HATCH
    return SETUP_STYLES.get(setup, OTHER_STYLE)
