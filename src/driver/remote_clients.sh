# remote_clients.sh: --client-hosts: wrk on each client at once (through the helper's agents), and closing the ssh masters.
# Sourced by run_bench.sh (its settings and state are there); not run on its own.
# shellcheck shell=bash

# --- Clients: wrk on each of --client-hosts at once ----------------------------------------

# uses_local_client: true when wrk runs on this machine (no --client-hosts, or `local` among them).
uses_local_client() {
  local hosts=()
  read -ra hosts <<<"${PLAN[client_hosts]:-local}"
  contains local "${hosts[@]}"
}

# clients_preflight: with --client-hosts, the helper checks every client (wrk there, installed
# with apt-get when ssh logs in as root; else exit 2 with the command), makes a private work
# dir on each remote one (histogram.lua copied into it), times each one's RTT to the target
# and keeps all that in CLIENTS_STATE for warm_up, measure and cleanup (docs/driver.md).
clients_preflight() {
  local address="" line
  [[ -n "${PLAN[client_hosts]:-}" ]] || return 0
  [[ -z "${PLAN[server_host]:-}" ]] || address="${PLAN[server_address]:-${PLAN[server_host]#*@}}"
  CLIENTS_STATE="${WORK}/clients.json"
  helper clients-preflight --plan "${WORK}/plan.json" --control-path "${WORK}/ssh/%C" --hist-script "${HIST_SCRIPT}" \
    --target "${address}" --save "${CLIENTS_STATE}" >"${WORK}/clients.txt" || exit
  while IFS= read -r line; do
    log "${line}"
  done <"${WORK}/clients.txt"
}

# record_clients: the clients' machines and RTT into the manifest (client_hosts, network.rtt).
record_clients() {
  [[ -z "${CLIENTS_STATE}" ]] || helper clients-record --run "${RUN_DIR}" --state "${CLIENTS_STATE}"
}

# client_files STEM: CURRENT_FILES gains the .client-<i> files of a measurement on several clients.
client_files() {
  local hosts=() i
  read -ra hosts <<<"${PLAN[client_hosts]:-}"
  ((${#hosts[@]} > 1)) || return 0
  for ((i = 1; i <= ${#hosts[@]}; i++)); do
    CURRENT_FILES+=("${RUN_DIR}/$1.client-${i}${PLAN[raw_suffix]}" "${RUN_DIR}/$1.client-${i}.hist.json")
  done
}

# warm_up_clients SETUP: the warm-up wrk (WRK_ARGS) on every client at once, through the helper.
warm_up_clients() {
  local rc=0 line
  ask warm-up --clients "${CLIENTS_STATE}" --stderr "${WORK}/wrk.stderr" -- "${WRK_ARGS[@]}" || rc=$?
  ((rc != 130 && rc != 143)) || exit "${rc}"
  ((rc == 0)) || die 1 "could not run the warm-up of $1 on the clients (exit status ${rc})"
  for line in "${ANSWER[@]}"; do
    log "warm-up of $1: ${line}"
  done
}

# clients_down: stop any wrk left on the remote clients and remove their work dirs (cleanup).
clients_down() {
  local problems
  [[ -n "${CLIENTS_STATE}" && -f "${CLIENTS_STATE}" ]] || return 0
  problems="$(helper clients-down --state "${CLIENTS_STATE}")"
  [[ -z "${problems}" ]] || log "warning: ${problems//$'\n'/; }"
}

# ssh_close_all: end every master connection (each ends its sessions), and wait until its
# process is gone: `ssh -O exit` only asks, and the master exits after the script would have
# (a test once found one still there as the script's exit status arrived).
ssh_close_all() {
  local host pid
  for host in "${SSH_HOSTS[@]}"; do
    pid="$(ssh_master_pid "${host}")"
    ssh_cmd -O exit -- "${host}"
    "${SSH[@]}" 2>/dev/null || true
    [[ -z "${pid}" ]] || stop_process "${pid}" "ssh master to ${host}" 1
  done
  SSH_HOSTS=()
}

# ssh_master_pid HOST: print the PID of HOST's master connection (ssh -O check), nothing when none runs.
ssh_master_pid() {
  local said
  ssh_cmd -O check -- "$1"
  said="$("${SSH[@]}" 2>&1)" || return 0
  [[ "${said}" =~ \(pid=([0-9]+)\) ]] && printf '%s\n' "${BASH_REMATCH[1]}"
  return 0
}
