# common.sh: logging, dying, the helper (one-shot and the long-lived `serve`), small tests.
# Sourced by run_bench.sh (its settings and state are there); not run on its own.
# shellcheck shell=bash

log() {
  if ((PROGRESS_OPEN)); then
    printf '\n' >&2
    PROGRESS_OPEN=0
  fi
  printf '[run_bench] %s\n' "$*" >&2
}

# die STATUS MESSAGE: log, remember why for the manifest, exit (cleanup runs on EXIT).
die() {
  local status="$1"
  shift
  FAIL_REASON="$*"
  log "error: $*"
  exit "${status}"
}

on_error() {
  [[ -n "${FAIL_REASON}" ]] || FAIL_REASON="$2: '$3' failed with exit status $1" # $2: file:line
}

# helper SUBCOMMAND ARGS...: the driver's helper, wrkreport.bench (contract: docs/driver.md).
helper() {
  PYTHONPATH="${ROOT}/src${PYTHONPATH:+:${PYTHONPATH}}" python3 -m wrkreport.bench "$@"
}

# helper_bg ARGS...: the helper in the background as one process, so $! is Python's own PID.
helper_bg() {
  PYTHONPATH="${ROOT}/src${PYTHONPATH:+:${PYTHONPATH}}" exec python3 -m wrkreport.bench "$@"
}

# start_helper: the long-lived helper for the run's bookkeeping (docs/driver.md, `serve`).
start_helper() {
  local target=()
  [[ -z "${TARGET}" ]] || target=(--ssh-control "${WORK}/ssh/%C" --target-dir "${TARGET_DIR}")
  coproc HELPER { helper_bg serve --run "${RUN_DIR}" "${target[@]}"; }
  HELPER_PROC="${HELPER_PID}"
}

# ask SUBCOMMAND ARGS...: send one command to the helper (arguments NUL-ended, then an
# RS argument) and read its answer into ANSWER, up to its `@@done STATUS` line; return STATUS.
ask() {
  local line
  ANSWER=()
  if [[ -z "${HELPER_PROC}" ]] || ! is_running "${HELPER_PROC}"; then
    die 1 "the helper (wrkreport.bench serve) is not running"
  fi
  printf '%s\0' "$@" $'\x1e' >&"${HELPER[1]}"
  while :; do
    if ! IFS= read -r line <&"${HELPER[0]}"; then
      is_running "${HELPER_PROC}" || die 1 "the helper (wrkreport.bench serve) exited during '$1'"
      continue # a signal interrupted read; its trap has run
    fi
    if [[ "${line}" == "@@done "* ]]; then
      [[ "${line}" != "@@done 4" || -z "${TARGET}" ]] || target_lost "running '$1' (the helper's connection ended)"
      return "${line#@@done }"
    fi
    ANSWER+=("${line}")
  done
}

# stop_helper: close the helper's input and wait for it (it has written everything).
stop_helper() {
  [[ -n "${HELPER_PROC}" ]] || return 0
  local fd="${HELPER[1]:-}"
  [[ -z "${fd}" ]] || exec {fd}>&-
  gone_within "${HELPER_PROC}" 5 || kill -TERM "${HELPER_PROC}" 2>/dev/null
  wait "${HELPER_PROC}" 2>/dev/null || true
  HELPER_PROC=""
}

contains() {
  local needle="$1" item
  shift
  for item in "$@"; do
    [[ "${item}" == "${needle}" ]] && return 0
  done
  return 1
}

is_root() { ((EUID == 0)); }

# servers_as_root: true when the servers run as root (here, or where ssh logs in on the target).
servers_as_root() {
  if [[ -n "${TARGET}" ]]; then [[ "${TARGET_UID}" == 0 ]]; else is_root; fi
}

# start_in_group COMMAND...: start COMMAND in the background in a process group of its own (its PID is the
# group's ID, in GROUP_PID), in this script's session: `set -m` for the one job. Not setsid: a session of its own is
# an autogroup of its own (kernel.sched_autogroup_enabled, on in Debian), and the scheduler shares the CPUs between
# autogroups before it shares them between threads, so a server in one would get as much CPU as wrk, nginx and Go
# together (measured, 4 runs each: HAProxy's req/s 0.77-0.83 of nginx's with it, 1.00-1.05 without). The caller's redirections
# are the command's.
start_in_group() {
  set -m
  "$@" &
  GROUP_PID=$!
  set +m
}

# gone_within PID SECONDS: true once PID is no longer running (is_running), checked every 0.1 s;
# false if it still runs after SECONDS (0: checked once).
gone_within() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    is_running "$1" || return 0
    sleep 0.1
  done
  ! is_running "$1"
}

# is_running PID: true while the process exists and is not a zombie.
is_running() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [[ "${stat:0:1}" != "Z" ]]
}
