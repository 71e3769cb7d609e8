"""Entry point for `python -m wrkreport`: the same CLI as the `wrkreport` script."""

from .cli import main

main()
