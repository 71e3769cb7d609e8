"""Core: what the driver's helper (bench/) and the report share, standard library only.

    setups    the setup table: ids, descriptions, servers, ports, kinds, baselines, --variant twins
    records   the records every step works on: one parsed load-generator output, a check, a ratio
    stats     intervals over blocks and repeats, the stopping rule's arithmetic
    units     wrk's and ab's units -> ms, bytes, seconds
    cpucost   CPU time per 1,000 requests: one formula
    cpus      the CPUs this process may run on
    errors    every error the library raises on purpose, typed
    display   a value cut short for a message or a label: one rule
    rate_result  one open-loop (vegeta) measurement's per-request results, merged over clients
    rate_checks  may its latencies be read at its rate: rate held, answers, errors, the generator's CPU
    capacity  the capacity search at a latency objective (--slo) and its estimate over blocks

tests/test_layout.py holds this package to the standard library: no pandas, matplotlib or
jinja2, nothing from report/ or bench/, nothing from the rest of wrkreport.
"""
