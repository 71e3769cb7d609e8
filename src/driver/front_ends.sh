# front_ends.sh: HAProxy, Caddy and Apache httpd in nginx's place: each one's binary found (its Debian package
# installed as root when missing), its configuration rendered into the run directory and checked, started per block in a
# process group of its own on the setups' ports (127.0.0.1 only), its answer captured like an app's, stopped with its group.
# Sourced by run_bench.sh (its settings and state are there); not run on its own.
# shellcheck shell=bash

# front_end_binary NAME: the path of a front end's program (haproxy, caddy, apache2); false when it is not installed.
front_end_binary() {
  local program="$1" dir
  [[ "$1" != apache ]] || program=apache2
  command -v "${program}" 2>/dev/null && return 0
  for dir in /usr/sbin /usr/bin; do # not on a non-root PATH
    [[ -x "${dir}/${program}" ]] && printf '%s\n' "${dir}/${program}" && return 0
  done
  return 1
}

# front_ends_missing: the front ends the run needs that are not installed, one per line (their tool names for install_tools).
front_ends_missing() {
  local name names=()
  read -ra names <<<"${PLAN[front_ends]:-}"
  for name in "${names[@]}"; do
    front_end_binary "${name}" >/dev/null || printf '%s\n' "${name}"
  done
}

# find_front_ends: FRONT_BINS[NAME] for every front end the run needs (after preflight_tools installed what was missing).
find_front_ends() {
  local name names=()
  read -ra names <<<"${PLAN[front_ends]:-}"
  for name in "${names[@]}"; do
    FRONT_BINS["${name}"]="$(front_end_binary "${name}")" || die 2 "${name} is not installed"
  done
}

# render_front_ends: each front end's configuration in the run directory (the helper's render-front-ends), checked with
# the program's own test (haproxy -c, apache2 -t, caddy validate); a rejection ends the run with what it said.
render_front_ends() {
  local args=(render-front-ends --run "${RUN_DIR}" --work "${WORK}" --socket "${SOCKET}" --rlimit "${NOFILE/unlimited/${NGINX_RLIMIT_MAX}}")
  local name output
  ! is_root || args+=(--user "${WORKER_USER_AS_ROOT}" --group "${WORKER_GROUP}")
  mkdir -p "${WORK}/apache" "${WORK}/caddy"
  caddy_environment
  helper "${args[@]}" >/dev/null
  for name in "${!FRONT_BINS[@]}"; do
    case "${name}" in
      haproxy) output="$("${FRONT_BINS[haproxy]}" -c -q -f "${RUN_DIR}/$(front_end_config haproxy)" 2>&1)" ;;
      apache) output="$("${FRONT_BINS[apache]}" -t -f "${RUN_DIR}/$(front_end_config apache)" 2>&1)" ;;
      caddy) output="$(caddy_env "${FRONT_BINS[caddy]}" validate --config "${RUN_DIR}/$(front_end_config caddy)" 2>&1)" ;;
    esac || die 1 "$(front_end_name "${name}") rejected ${RUN_DIR}/$(front_end_config "${name}"): $(printf '%s' "${output}" | tail -n 3 | paste -sd ' ' -)"
  done
}

# front_end_config NAME: its configuration's file name in the run directory (the plan's, from bench/front_ends.py).
front_end_config() {
  printf '%s\n' "${PLAN[front_end_config.$1]}"
}

# caddy_env COMMAND...: run Caddy with CADDY_ENV (caddy_environment).
caddy_env() {
  env "${CADDY_ENV[@]}" "$@"
}

# caddy_environment: CADDY_ENV, env's arguments for Caddy: its home, configuration and data directories in the work dir (its
# autosave and state stay there, none in the user's home), and no GOMAXPROCS: every CPU, as nginx's workers.
caddy_environment() {
  CADDY_ENV=(-u GOMAXPROCS HOME="${WORK}/caddy" XDG_CONFIG_HOME="${WORK}/caddy" XDG_DATA_HOME="${WORK}/caddy")
}

# start_front_ends N: start each front end the run needs in a process group of its own (start_in_group: its PID is the
# group's ID; in this script's session, so in the scheduler's autogroup of nginx and Go), on the servers' CPUs when pinned,
# its output appended to its log; ready when its first setup answers. One that does not start leaves its reason in
# DOWN[NAME]; the setups needing it are not measured in this block.
start_front_ends() {
  local n="$1" name names=() log_file url
  read -ra names <<<"${PLAN[front_ends]:-}"
  for name in "${names[@]}"; do
    log_file="${RUN_DIR}/$(server_log "${name}" "${n}")"
    case "${name}" in
      haproxy) start_in_group "${SERVER_PIN[@]}" "${FRONT_BINS[haproxy]}" -db -f "${RUN_DIR}/$(front_end_config haproxy)" </dev/null >>"${log_file}" 2>&1 ;;
      caddy) # env execs: the group's PID is Caddy's own
        start_in_group env "${CADDY_ENV[@]}" "${SERVER_PIN[@]}" "${FRONT_BINS[caddy]}" run --config "${RUN_DIR}/$(front_end_config caddy)" </dev/null >>"${log_file}" 2>&1
        ;;
      apache) # its ErrorLog is a link in the work dir: this block's log
        ln -sfn "${log_file}" "${WORK}/apache/error.log"
        start_in_group "${SERVER_PIN[@]}" "${FRONT_BINS[apache]}" -f "${RUN_DIR}/$(front_end_config apache)" -DFOREGROUND </dev/null >>"${log_file}" 2>&1
        ;;
    esac
    FRONT_PIDS["${name}"]="${GROUP_PID}"
    url="${PLAN[url.${PLAN[first_setup.${name}]}]}"
    if ! wait_answer "${url}" "${FRONT_PIDS[${name}]}" "$((SECONDS + READY_TIMEOUT_S))"; then
      DOWN["${name}"]="$(front_end_name "${name}") did not answer ${url} within ${READY_TIMEOUT_S}s: $(app_log_tail "${log_file}") ($(server_log "${name}" "${n}"))"
      log "GOMAXPROCS=${n}: ${DOWN[${name}]}; no setup that needs it is measured in this block"
      stop_front_end "${name}"
    fi
  done
}

# front_end_name NAME: how messages name it (the plan's, from core/setups.py).
front_end_name() {
  printf '%s\n' "${PLAN[front_end_name.$1]:-$1}"
}

# stop_front_end NAME: stop its whole process group (stop_group: SIGTERM to it, SIGKILL to whatever is left).
stop_front_end() {
  local pid="${FRONT_PIDS[$1]:-}"
  [[ -n "${pid}" ]] || return 0
  stop_group "${pid}" "$(front_end_name "$1")"
  FRONT_PIDS["$1"]=""
}

# stop_front_ends: stop every front end started.
stop_front_ends() {
  local name
  for name in "${!FRONT_PIDS[@]}"; do
    stop_front_end "${name}"
  done
}

# front_capture SETUP URL FILE: one GET of a front end's setup: its header block in FILE, its body as sent (--raw: a
# chunked one with its framing, decoded by pass-ready) in the work dir (APP_BODY: pass-ready's --app-body, compared with
# go-http's); curl's status.
front_capture() {
  local body="${WORK}/$1.body" rc=0
  curl -s --raw -D "$3" -o "${body}" --max-time "${CURL_MAX_TIME_S}" "$2" || rc=$?
  APP_BODY=(--app-body "$1" "${body}")
  return "${rc}"
}

# is_front_end_setup SETUP: true for a setup served by HAProxy, Caddy or Apache httpd.
is_front_end_setup() {
  case "${PLAN[server.$1]:-}" in haproxy | caddy | apache) return 0 ;; *) return 1 ;; esac
}
