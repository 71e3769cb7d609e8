"""Analysis: checked measurements -> cells, paired overhead ratios with intervals, latency percentiles, noise warnings and the reference figures."""
