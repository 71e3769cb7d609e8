# app.sh: --app, the user's own server: started per block in a session of its own, ready when
# it answers on its port, its answer captured, stopped with its whole session; bad input exits 2.
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

# is_app_setup SETUP: true for a setup serving the app (app, nginx-app; --app-b's app~NAME, nginx-app~NAME).
is_app_setup() {
  [[ " ${PLAN[needs.$1]:-} " == *" app "* || " ${PLAN[needs.$1]:-} " == *" appb "* ]]
}

# start_app N: the app's command line ({port}: the app port) run by bash with GOMAXPROCS=N, in a
# session of its own (setsid: a background job here is no group leader, so setsid does not fork
# and APP_PID is the session's and its process group's ID), on the servers' CPUs when pinned,
# stdout and stderr appended (O_APPEND, so capping the log is safe) to its log; then wait until
# it answers. False with APP_WHY when it exits or does not answer in time.
start_app() {
  local n="$1" log_file command="${PLAN[app_command]}"
  log_file="${RUN_DIR}/$(server_log app "${n}")"
  command="${command//\{port\}/${PLAN[port.app]}}"
  APP_LOG="${log_file}"
  GOMAXPROCS="${n}" "${SERVER_PIN[@]}" setsid bash -c "${command}" </dev/null >>"${log_file}" 2>&1 &
  APP_PID=$!
  app_ready "${APP_PID}" "${PLAN[url.app]}"
}

# app_ready PID URL: up to READY_TIMEOUT_S for any HTTP answer at an app's URL (a command
# listening elsewhere never gives one); false with APP_WHY when PID exits first or time is up.
app_ready() {
  local pid="$1" url="$2" deadline=$((SECONDS + READY_TIMEOUT_S)) code rc=0
  while :; do
    if ! is_running "${pid}"; then
      wait "${pid}" 2>/dev/null || rc=$?
      APP_WHY="exited with status ${rc} before answering on ${url}"
      return 1
    fi
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "${APP_HEADER_ARGS[@]}" "${url}")" || true
    [[ "${code}" == 000 ]] || return 0
    if ((SECONDS >= deadline)); then
      APP_WHY="did not answer on ${url} within ${READY_TIMEOUT_S}s (is it listening on 127.0.0.1:{port}?)"
      return 1
    fi
    sleep 0.1
  done
}

# session_members SID: the PIDs (space-separated) of the processes of session SID still running.
session_members() {
  local dir stat fields=()
  for dir in /proc/[0-9]*; do
    { read -r stat <"${dir}/stat"; } 2>/dev/null || continue
    read -ra fields <<<"${stat##*) }"
    [[ "${fields[3]:-}" == "$1" && "${fields[0]}" != Z ]] && printf '%s ' "${dir#/proc/}"
  done
  return 0
}

# stop_app: stop the app's whole session (stop_session).
stop_app() {
  [[ -n "${APP_PID}" ]] || return 0
  stop_session "${APP_PID}" "your app"
  APP_PID=""
}

# stop_session SID WHO: SIGTERM to an app's process group, up to STOP_TIMEOUT_S for its whole
# session to end, then SIGKILL to the group and to every process left in the session; reap it.
stop_session() {
  local sid="$1" who="$2" i left
  kill -TERM -- "-${sid}" 2>/dev/null || true
  for ((i = 0; i < STOP_TIMEOUT_S * 10; i++)); do
    left="$(session_members "${sid}")"
    [[ -n "${left}" ]] || break
    sleep 0.1
  done
  left="$(session_members "${sid}")"
  if [[ -n "${left}" ]]; then
    log "${who} (session ${sid}: ${left% }) still running ${STOP_TIMEOUT_S}s after SIGTERM: SIGKILL"
    kill -KILL -- "-${sid}" 2>/dev/null || true
    # shellcheck disable=SC2086 # a list of PIDs
    kill -KILL ${left} 2>/dev/null || true
  fi
  wait "${sid}" 2>/dev/null || true
}

# app_log_tail [LOG]: the last lines of the app's log (or LOG) on one line ("a | b | c"), for messages.
app_log_tail() {
  local text
  text="$(tail -n 3 "${1:-${APP_LOG}}" 2>/dev/null | tr -d '\r' | cut -c 1-200 | paste -sd '|' - | sed 's/|/ | /g')" || true
  printf '%s\n' "${text:-nothing}"
}

# app_refuse SETUP REASON: at the run's first check of the app, a setup of it that cannot be
# measured is bad input: exit 2 with one line naming the command and the end of its log.
app_refuse() {
  ((PLAN[app])) && ((!APP_CHECKED)) && is_app_setup "$1" || return 0
  local who="your app (--app '${PLAN[app_shown]}')" log_file="${APP_LOG}"
  [[ "$1" == app ]] || who="$1 (nginx in front of your app, --app '${PLAN[app_shown]}'; the only nginx app setup)"
  [[ "$1" != *"~"* ]] || who="$1 (the --variant's nginx in front of your app, --app '${PLAN[app_shown]}')"
  if [[ " ${PLAN[needs.$1]} " == *" appb "* ]]; then # --app-b's twins: its command and its log
    log_file="${APP_B_LOG}"
    who="your app's build ${PLAN[app_b_name]} (--app-b '${PLAN[app_b_shown]}')"
    [[ "$1" == "app~${PLAN[app_b_name]}" ]] || who="$1 (nginx in front of ${who#your app\'s })"
  fi
  die 2 "${who} $2; the last lines of ${log_file#"${RUN_DIR}/"}: $(app_log_tail "${log_file}")"
}

# app_capture SETUP URL FILE: one GET of an app setup's URL with the --app-header's: its header
# block in FILE, its body in the work dir (APP_BODY: pass-ready's --app-body); curl's status.
app_capture() {
  local body="${WORK}/$1.body" rc=0
  curl -s -D "$3" -o "${body}" --max-time "${CURL_MAX_TIME_S}" "${APP_HEADER_ARGS[@]}" "$2" || rc=$?
  APP_BODY=(--app-body "$1" "${body}")
  return "${rc}"
}
