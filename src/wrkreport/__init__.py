"""wrkreport: what putting nginx in front of a Go server costs, measured with wrk."""

__version__ = "0.1.0"
