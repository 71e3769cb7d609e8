# app.sh: --app, --app-unix and --app-fcgi, the user's own server as processes by name (app, the
# baseline; app-unix; app-fcgi): each started per block in a process group of its own, ready when
# it answers (a FastCGI one: when it accepts a connection), its answer captured, stopped with its
# whole group; bad input exits 2. --app-b's second build has its own start and stop (app_b.sh)
# and shares the rest (app_ready, stop_group, app_refuse).
# Sourced by run_bench.sh (its settings and state are there); not run on its own.
# shellcheck shell=bash

# app_header_args: the -H arguments of --app-header, for wrk and curl (APP_HEADER_ARGS), and
# the helper's --header ones for vegeta (APP_RATE_ARGS; it sends them to the app setups only).
app_header_args() {
  local i
  APP_HEADER_ARGS=() APP_RATE_ARGS=()
  for ((i = 0; i < ${PLAN[app_headers]:-0}; i++)); do
    APP_HEADER_ARGS+=(-H "${PLAN[app_header.${i}]}")
    APP_RATE_ARGS+=(--header "${PLAN[app_header.${i}]}")
  done
}

# is_app_setup SETUP: true for a setup serving the app (app, nginx-app, nginx-app-unix, nginx-app-fcgi-*;
# --app-b's app~NAME, nginx-app~NAME).
is_app_setup() {
  [[ -n "$(setup_app_process "$1")" || " ${PLAN[needs.$1]:-} " == *" appb "* ]]
}

# setup_app_process SETUP: the app process SETUP needs (app, app-unix or app-fcgi; core.setups
# APP_PROCESSES); empty for a setup that serves no app.
setup_app_process() {
  local name needs=()
  read -ra needs <<<"${PLAN[needs.$1]:-}"
  for name in "${needs[@]}"; do
    case "${name}" in app | app-unix | app-fcgi) printf '%s\n' "${name}" ;; esac
  done
  return 0
}

# app_socket NAME: the Unix socket of app process NAME in the work dir; empty when it listens on a port.
app_socket() {
  [[ -z "${PLAN[app_socket.$1]:-}" ]] || printf '%s\n' "${WORK}/${PLAN[app_socket.$1]}"
}

# app_where NAME: where app process NAME is to listen, for messages ("127.0.0.1:8088", "its Unix socket PATH").
app_where() {
  local socket
  socket="$(app_socket "$1")"
  if [[ -n "${socket}" ]]; then printf 'its Unix socket %s\n' "${socket}"; else printf '%s:%s\n' "${PLAN[app_host]:-127.0.0.1}" "${PLAN[port.$1]}"; fi
}

# start_apps N: start each app process a chosen setup needs (PLAN[app_processes]; app, the
# baseline, always); one that does not start leaves its reason in DOWN[NAME] and, at the first
# block, is bad input (exit 2).
start_apps() {
  local name names=()
  read -ra names <<<"${PLAN[app_processes]:-}"
  for name in "${names[@]}"; do
    start_app "${name}" "$1" && continue
    DOWN["${name}"]="your app (${PLAN[app_option.${name}]}) ${APP_WHY}"
    app_refuse_process "${name}" "${APP_WHY}" # the first block: bad input, exit 2
    log "GOMAXPROCS=$1: ${DOWN[${name}]}; no setup serving it is measured in this block"
    stop_app "${name}"
  done
}

# start_app NAME N: app process NAME's command line ({port}: its port, {socket}: its socket, {host}:
# the address it listens on, 127.0.0.1 or --server-host's address) run
# by bash with GOMAXPROCS=N, in a process group of its own (start_in_group: bash's PID is the
# group's ID; in this script's session, so in the scheduler's autogroup of nginx and Go), on
# the servers' CPUs when pinned, stdout and stderr appended (O_APPEND, so capping the log is
# safe) to its log; then wait until it is ready. With --server-host all that on the target
# (target_start_app: --app's process only). False with APP_WHY when it exits or is not ready in time.
start_app() {
  local name="$1" n="$2" log_file command="${PLAN[app_command.$1]}" socket
  log_file="${RUN_DIR}/$(server_log "${name}" "${n}")"
  socket="$(app_socket "${name}")"
  if [[ -n "${socket}" ]]; then
    rm -f -- "${socket}" # the previous block's: most servers refuse to bind over a file
    command="${command//\{socket\}/${socket}}"
  else
    command="${command//\{port\}/${PLAN[port.${name}]}}"
  fi
  command="${command//\{host\}/${PLAN[app_host]}}"
  APP_LOGS["${name}"]="${log_file}"
  if [[ -n "${TARGET}" ]]; then
    target_start_app "${n}" "${command}" "${log_file}"
    return
  fi
  start_in_group env GOMAXPROCS="${n}" "${SERVER_PIN[@]}" bash -c "${command}" </dev/null >>"${log_file}" 2>&1
  APP_PIDS["${name}"]="${GROUP_PID}"
  app_ready "${APP_PIDS[${name}]}" "$(app_where "${name}")" "${name}"
}

# app_ready PID WHERE [NAME]: up to READY_TIMEOUT_S for an app to be ready: app process NAME by
# app_answers, or (no NAME: --app-b's build) any HTTP answer at the URL WHERE; false with APP_WHY
# when PID exits first or time is up. A socket the servers, as root, must share with nginx's
# workers is given their group and mode 0660 (as Go's sockets are) once it is there.
app_ready() {
  local pid="$1" where="$2" name="${3:-}" deadline=$((SECONDS + READY_TIMEOUT_S)) socket="" code rc=0
  [[ -z "${name}" ]] || socket="$(app_socket "${name}")"
  while :; do
    if ! server_alive "${pid}"; then # here, or on the target (no exit status from there)
      APP_WHY="exited on ${TARGET} before answering on ${where}"
      [[ -n "${TARGET}" ]] || wait "${pid}" 2>/dev/null || rc=$?
      [[ -n "${TARGET}" ]] || APP_WHY="exited with status ${rc} before answering on ${where}"
      return 1
    fi
    if [[ -n "${name}" ]] && app_answers "${name}" "${socket}"; then
      if [[ -n "${socket}" ]] && servers_as_root; then
        { chgrp "${WORKER_GROUP}" "${socket}" && chmod 0660 "${socket}"; } || die 1 "cannot give ${socket} to nginx's workers (group ${WORKER_GROUP})"
      fi
      return 0
    elif [[ -z "${name}" ]]; then
      code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "${APP_HEADER_ARGS[@]}" "${where}")" || true
      [[ "${code}" == 000 ]] || return 0
    fi
    if ((SECONDS >= deadline)); then
      APP_WHY="did not answer on ${where} within ${READY_TIMEOUT_S}s (is it listening where {host}:{port} or {socket} says? {host} is ${PLAN[app_host]})"
      return 1
    fi
    sleep 0.1
  done
}

# app_answers NAME SOCKET: true once app process NAME is ready. An HTTP one (app, app-unix) when
# it gives any HTTP answer at the app's URL (over SOCKET for app-unix); a FastCGI one (app-fcgi),
# which curl cannot speak to, once its port or socket accepts a connection: curl's exit status
# is then anything but 7 ("could not connect"); its answer is checked through nginx, like every setup's.
app_answers() {
  local code rc=0 via=()
  [[ -z "$2" ]] || via=(--unix-socket "$2")
  if [[ "$1" == app-fcgi ]]; then
    [[ -n "$2" ]] || via=(--connect-to "::127.0.0.1:${PLAN[port.app-fcgi]}")
    curl -s -o /dev/null --max-time 0.2 "${via[@]}" "${PLAN[url.app]}" 2>/dev/null || rc=$?
    ((rc != 7))
    return
  fi
  code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "${via[@]}" "${APP_HEADER_ARGS[@]}" "${PLAN[url.app]}")" || true
  [[ "${code}" != 000 ]]
}

# group_members PGID: the PIDs (space-separated) of the processes of process group PGID still running.
group_members() {
  local dir stat fields=()
  for dir in /proc/[0-9]*; do
    { read -r stat <"${dir}/stat"; } 2>/dev/null || continue
    read -ra fields <<<"${stat##*) }"
    [[ "${fields[2]:-}" == "$1" && "${fields[0]}" != Z ]] && printf '%s ' "${dir#/proc/}"
  done
  return 0
}

# stop_app NAME: stop app process NAME's whole process group (stop_group) and remove its socket.
stop_app() {
  local name="$1" pid="${APP_PIDS[$1]:-}" socket
  [[ -n "${pid}" ]] || return 0
  if [[ -n "${TARGET}" ]]; then # server_machine.sh stop: the same, there
    target_stop app
    APP_PIDS["${name}"]=""
    return 0
  fi
  stop_group "${pid}" "your app (${PLAN[app_option.${name}]})"
  APP_PIDS["${name}"]=""
  socket="$(app_socket "${name}")"
  [[ -z "${socket}" ]] || rm -f -- "${socket}"
}

# stop_group PGID WHO: SIGTERM to a server's process group (an app's, a front end's), up to
# STOP_TIMEOUT_S for the whole group to end, then SIGKILL to the group and to every process left in it; reap it.
stop_group() {
  local pgid="$1" who="$2" i left
  kill -TERM -- "-${pgid}" 2>/dev/null || true
  for ((i = 0; i < STOP_TIMEOUT_S * 10; i++)); do
    left="$(group_members "${pgid}")"
    [[ -n "${left}" ]] || break
    sleep 0.1
  done
  left="$(group_members "${pgid}")"
  if [[ -n "${left}" ]]; then
    log "${who} (process group ${pgid}: ${left% }) still running ${STOP_TIMEOUT_S}s after SIGTERM: SIGKILL"
    kill -KILL -- "-${pgid}" 2>/dev/null || true
    # shellcheck disable=SC2086 # a list of PIDs
    kill -KILL ${left} 2>/dev/null || true
  fi
  wait "${pgid}" 2>/dev/null || true
}

# stop_apps: stop every app process started (each with its whole process group).
stop_apps() {
  local name
  for name in "${!APP_PIDS[@]}"; do
    stop_app "${name}"
  done
}

# app_log_tail LOG: the last lines of an app's log on one line ("a | b | c"), for messages.
app_log_tail() {
  local text
  text="$(tail -n 3 "$1" 2>/dev/null | tr -d '\r' | cut -c 1-200 | paste -sd '|' - | sed 's/|/ | /g')" || true
  printf '%s\n' "${text:-nothing}"
}

# app_refuse SETUP REASON: at the run's first check of the app, an app setup that cannot be
# measured is bad input: exit 2 with one line naming the command and the end of its log.
app_refuse() {
  ((PLAN[app])) && ((!APP_CHECKED)) && is_app_setup "$1" || return 0
  local name who log_file
  if [[ " ${PLAN[needs.$1]} " == *" appb "* ]]; then # --app-b's twins: its command and its log
    log_file="${APP_B_LOG}"
    who="your app's build ${PLAN[app_b_name]} (--app-b '${PLAN[app_b_shown]}')"
    [[ "$1" == "app~${PLAN[app_b_name]}" ]] || who="$1 (nginx in front of ${who#your app\'s })"
    die 2 "${who} $2; the last lines of ${log_file#"${RUN_DIR}/"}: $(app_log_tail "${log_file}")"
  fi
  name="$(setup_app_process "$1")"
  [[ "$1" != app ]] || app_refuse_process app "$2"
  who="nginx in front of your app"
  [[ "$1" != *"~"* ]] || who="the --variant's nginx in front of your app"
  log_file="${APP_LOGS[${name}]:-}"
  die 2 "$1 (${who}, ${PLAN[app_option.${name}]} '${PLAN[app_shown.${name}]}') $2; the last lines of ${log_file#"${RUN_DIR}/"}: $(app_log_tail "${log_file}")"
}

# app_refuse_process NAME REASON: at the run's first block, app process NAME not ready is bad
# input: exit 2 with one line naming its command and the end of its log.
app_refuse_process() {
  ((PLAN[app])) && ((!APP_CHECKED)) || return 0
  local log_file="${APP_LOGS[$1]:-}"
  die 2 "your app (${PLAN[app_option.$1]} '${PLAN[app_shown.$1]}') $2; the last lines of ${log_file#"${RUN_DIR}/"}: $(app_log_tail "${log_file}")"
}

# app_capture SETUP URL FILE: one GET of an app setup's URL with the --app-header's: its header
# block in FILE, its body in the work dir (APP_BODY: pass-ready's --app-body); curl's status.
app_capture() {
  local body="${WORK}/$1.body" rc=0
  curl -s -D "$3" -o "${body}" --max-time "${CURL_MAX_TIME_S}" "${APP_HEADER_ARGS[@]}" "$2" || rc=$?
  APP_BODY=(--app-body "$1" "${body}")
  return "${rc}"
}
