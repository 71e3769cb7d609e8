"""The helper's subcommands, one module per step of a run (docs/driver.md): preflight, blocks, server_host
(--server-host), clients (--client-hosts), rate_phase (the fixed-rate phase), finish. __main__ parses and dispatches."""
