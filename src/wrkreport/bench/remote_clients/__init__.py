"""Remote clients: wrk on every --client-hosts machine at once, over the run's ssh masters (preflight, work dirs, agents, start, stop, records).

The driver's state for the clients lives in one JSON file in the script's private work
dir (`clients-preflight --save F`, then `--clients F` for `warm-up` and `measure`, and
`clients-down --state F` in the cleanup): the ssh options, and per client its label
(`client-1`, ...), its host (`local` or `[user@]host`), the private directory made there
with `mktemp -d` (histogram.lua copied into it once), what remote.py read of it and the
RTT to the target. On a remote client wrk runs under a small POSIX sh agent
(`agent_script`) kept on one ssh session for the whole `serve` (ClientSession: a new
session runs the login shell's rc files, tenths of a second between measurements): one
line per measurement, answered with wrk's stdout, the record (start and end on that
host's clock, CPU time from `times`), the histogram and wrk's stderr, then an end marker
carrying the exit status. The agent records wrk's PID so it can be killed by PID over a
new session (wrk keeps running when its ssh session closes). Nothing here prints: the
helper's subcommands do.
"""
