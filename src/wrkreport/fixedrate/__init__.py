"""Latency at a fixed load: the open-loop (vegeta) measurements of the fixed-rate phase, from file to comparison.

    record       one measurement's per-request results (rates, latencies, held or not), merged over clients
    rate_checks  the checks of one measurement (rate held, errors, the body, the generator's CPU)
    reading      a run directory's `fixed_rate_measurements` -> checked records
    analysis     per setup, GOMAXPROCS and rate: p50/p99 and the latency added over the baseline, with intervals
    summary      the terminal's lines of it
    comparison   two runs' (or a twin's) added latencies, B - A

Standard library only: the driver's helper reads and summarises the phase with it. Its chart
is charts/rates.py beside the other charts; its page section report/ratepage.py.
"""
