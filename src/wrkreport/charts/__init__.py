"""Charts: the analysis -> inline SVG (matplotlib's Figure API), laid out and styled in one place, drawn in forked children."""
