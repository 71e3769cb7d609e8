"""The driver's helper: run_bench.sh's plan, manifest, machine facts, ports, nginx, CPU and progress (standard library only)."""
