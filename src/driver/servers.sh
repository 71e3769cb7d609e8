# servers.sh: a block's servers here: nginx.conf, Go, fasthttp, Node, the app (app.sh) and nginx started, every setup's answer checked.
# Sourced by run_bench.sh (its settings and state are there); not run on its own.
# shellcheck shell=bash

render_nginx() {
  local rlimit="${NGINX_RLIMIT_MAX}"
  if [[ "${NOFILE}" != unlimited ]] && ((NOFILE < rlimit)); then
    rlimit="${NOFILE}"
  fi
  local args=(render-nginx --run "${RUN_DIR}" --template "${TEMPLATE}" --prefix "${WORK}/nginx"
    --socket "${SOCKET}" --http-socket "${HTTP_SOCKET}" --rlimit "${rlimit}" --out "${RUN_DIR}/nginx.conf") user=()
  if is_root; then
    user=(--user "${WORKER_USER_AS_ROOT}" --group "${WORKER_GROUP}")
  fi
  helper "${args[@]}" "${user[@]}"
  nginx_test "${NGINX}" nginx.conf "${WORK}/nginx" nginx
  render_variant_nginx "${rlimit}" "${user[@]}"
}

# nginx_test BINARY CONF PREFIX WHO: RUN_DIR/CONF checked with `BINARY -t`; with --server-host
# copied into the target's work dir and checked there (PREFIX: the target's). A rejection ends
# the run: "WHO rejected RUN_DIR/CONF: what nginx said".
nginx_test() {
  local binary="$1" name="$2" prefix="$3" who="$4" output
  if [[ -n "${TARGET}" ]]; then
    on_host "${TARGET}" "cat >$(shq "${TARGET_DIR}/${name}")" <"${RUN_DIR}/${name}" || target_lost "copying ${name}"
    output="$(on_host "${TARGET}" "$(shq "${binary}" -t -q -c "${TARGET_DIR}/${name}" -p "${prefix}/" -e "${TARGET_DIR}/${name%.conf}-test.log") 2>&1" </dev/null)" ||
      die 1 "${who} on ${TARGET} rejected ${RUN_DIR}/${name}: ${output}"
    return 0
  fi
  output="$("${binary}" -t -q -c "${RUN_DIR}/${name}" -p "${prefix}/" -e "${WORK}/${name%.conf}-test.log" 2>&1)" ||
    die 1 "${who} rejected ${RUN_DIR}/${name}: ${output}"
}

# wait_ready PID LOG: wait until the server logs its "ready" line; false if it exits or
# READY_TIMEOUT_S pass first.
wait_ready() {
  local deadline=$((SECONDS + READY_TIMEOUT_S))
  until grep -qs ' ready$' "$2"; do
    if ! is_running "$1" || ((SECONDS >= deadline)); then
      return 1
    fi
    sleep 0.1
  done
}

# not_started NAME LOG: why a server did not start, from the last line of its log.
not_started() {
  local last
  last="$(tail -n 1 "${RUN_DIR}/$2")"
  printf '%s did not start within %ss: %s (%s)\n' "$1" "${READY_TIMEOUT_S}" "${last:-no output}" "$2"
}

# server_log NAME N: the log file name (under logs/) of a server in the current block:
# NAME.gomaxprocs-N.log in block 1, NAME.gomaxprocs-N.block-B.log after.
server_log() {
  if ((BLOCK > 1)); then
    printf 'logs/%s.gomaxprocs-%s.block-%s.log\n' "$1" "$2" "${BLOCK}"
  else
    printf 'logs/%s.gomaxprocs-%s.log\n' "$1" "$2"
  fi
}

# start_go N: start the Go server with GOMAXPROCS=N and wait for its "ready" line.
start_go() {
  local n="$1" log_file
  log_file="${RUN_DIR}/$(server_log go "$1")"
  local args=(-http-port "${PLAN[port.go-http]}" -fcgi-port "${PLAN[port.go-fcgi-tcp]}" -fcgi-socket "${SOCKET}"
    -http-socket "${HTTP_SOCKET}" -handler-delay "${PLAN[handler_delay]}" -body-bytes "${PLAN[body_bytes]}")
  go_tls_args
  args+=("${GO_TLS_ARGS[@]}")
  if servers_as_root; then
    args+=(-socket-mode 0660 -socket-group "${WORKER_GROUP}")
  else
    args+=(-socket-mode 0600) # nginx's workers run as this same user
  fi
  if [[ -n "${TARGET}" ]]; then # go-http's clients come from here; nginx keeps 127.0.0.1
    target_start GO_PID go "${log_file##*/}" "GOMAXPROCS=${n}" "${GO_BIN}" "${args[@]}" -public-address "${PLAN[server_address]}"
    target_ready "${GO_PID}" "${log_file}"
    return
  fi
  # taskset (when pinned) execs the server: $! is the server's own PID.
  GOMAXPROCS="${n}" "${SERVER_PIN[@]}" "${GO_BIN}" "${args[@]}" >"${log_file}" 2>&1 &
  GO_PID=$!
  wait_ready "${GO_PID}" "${log_file}"
}

# start_fasthttp N: start the fasthttp server with GOMAXPROCS=N; false if it is not ready.
start_fasthttp() {
  local n="$1" log_file
  log_file="${RUN_DIR}/$(server_log fasthttp "$1")"
  local args=(-http-port "${PLAN[port.go-fasthttp]}" -handler-delay "${PLAN[handler_delay]}" -body-bytes "${PLAN[body_bytes]}")
  if [[ -n "${TARGET}" ]]; then
    target_start FASTHTTP_PID fasthttp "${log_file##*/}" "GOMAXPROCS=${n}" "${FASTHTTP_BIN}" "${args[@]}" -address "${PLAN[server_address]}"
    target_ready "${FASTHTTP_PID}" "${log_file}"
    return
  fi
  GOMAXPROCS="${n}" "${SERVER_PIN[@]}" "${FASTHTTP_BIN}" "${args[@]}" >"${log_file}" 2>&1 &
  FASTHTTP_PID=$!
  wait_ready "${FASTHTTP_PID}" "${log_file}"
}

# start_node N: start nodehello for GOMAXPROCS=N: one process at N=1, a cluster of N
# workers otherwise (the 2012 study's "all CPUs" mode); false if it is not ready.
start_node() {
  local n="$1" log_file
  log_file="${RUN_DIR}/$(server_log node "$1")"
  local args=(--port "${PLAN[port.node-http]}" --workers "${n}" --handler-delay "${PLAN[handler_delay]}" --body-bytes "${PLAN[body_bytes]}")
  if [[ -n "${TARGET}" ]]; then
    target_copy "${NODE_SOURCE}"
    target_start NODE_PID node "${log_file##*/}" "${NODE}" "${TARGET_DIR}/server.js" "${args[@]}" --address "${PLAN[server_address]}"
    target_ready "${NODE_PID}" "${log_file}"
    return
  fi
  "${SERVER_PIN[@]}" "${NODE}" "${NODE_SOURCE}" "${args[@]}" >"${log_file}" 2>&1 &
  NODE_PID=$!
  wait_ready "${NODE_PID}" "${log_file}"
}

# start_nginx N: the run's nginx master (nginx_master), on the servers' CPUs when pinned.
start_nginx() {
  local prefix="${WORK}/nginx"
  [[ -z "${TARGET}" ]] || prefix="${TARGET_DIR}/nginx"
  nginx_master NGINX_PID nginx "${NGINX}" nginx.conf "${prefix}" "nginx-error.gomaxprocs-$1.log" "${SERVER_PIN[@]}"
}

# nginx_master VAR NAME BINARY CONF PREFIX LOG PIN...: start an nginx master with CONF and
# PREFIX, its errors in logs/LOG; VAR gets its PID. Here: in the foreground of a background
# job (so $! is the master) behind PIN (taskset -c LIST, or nothing), CONF the run dir's; with
# --server-host: on the target by server_machine.sh as NAME (stopped by that name), CONF the target's
# copy (nginx_test), never pinned (--pin-server is refused there).
nginx_master() {
  local var="$1" name="$2" binary="$3" conf="${RUN_DIR}/$4" prefix="$5" log_file="${RUN_DIR}/logs/$6"
  shift 6
  if [[ -n "${TARGET}" ]]; then
    conf="${TARGET_DIR}/${conf##*/}" log_file="${TARGET_DIR}/logs/${log_file##*/}"
  fi
  local args=(-c "${conf}" -p "${prefix}/" -e "${log_file}" -g "error_log \"${log_file}\" crit;")
  if [[ -n "${TARGET}" ]]; then
    target_start "${var}" "${name}" "${log_file##*/}" "${binary}" "${args[@]}"
    return 0
  fi
  "$@" "${binary}" "${args[@]}" >>"${log_file}" 2>&1 &
  printf -v "${var}" '%s' "$!"
}

# join_words A B C: "A, B and C".
join_words() {
  local text="$1"
  while (($# > 2)); do
    shift
    text+=", $1"
  done
  (($# < 2)) || text+=" and $2"
  printf '%s\n' "${text}"
}

# start_servers N: start the processes the chosen setups need (Setup.needs); a server that
# does not start leaves its reason in DOWN[server], and the setups needing it are not measured.
start_servers() {
  local n="$1"
  DOWN=()
  local names=()
  [[ -z "${PLAN[go_setups]}" ]] || names+=("the Go server")
  [[ -z "${PLAN[app_setups]}" ]] || names+=("your app (${PLAN[app_processes]// /, })")
  [[ -z "${PLAN[appb_setups]:-}" ]] || names+=("its build ${PLAN[app_b_name]}")
  [[ -z "${PLAN[nginx_setups]}" ]] || names+=(nginx)
  [[ -z "${PLAN[vnginx_setups]}" ]] || names+=("the variant's nginx (${PLAN[variant_name]})")
  local front fronts=()
  read -ra fronts <<<"${PLAN[front_ends]}"
  for front in "${fronts[@]}"; do
    names+=("$(front_end_name "${front}")")
  done
  [[ -z "${PLAN[fasthttp_setups]}" ]] || names+=("the fasthttp server")
  if [[ -n "${PLAN[node_setups]}" ]]; then
    if ((n == 1)); then names+=("the Node server (one process)"); else names+=("the Node server (cluster of ${n} workers)"); fi
  fi
  log "block ${BLOCK} GOMAXPROCS=${n}: starting $(join_words "${names[@]}")"
  if [[ -n "${PLAN[go_setups]}" ]] && ! start_go "${n}"; then
    DOWN[go]="$(not_started "the Go server" "$(server_log go "${n}")")"
    log "GOMAXPROCS=${n}: ${DOWN[go]}; no setup that needs it is measured in this block"
  fi
  [[ -z "${PLAN[app_setups]}" ]] || start_apps "${n}"
  if [[ -n "${PLAN[appb_setups]:-}" ]] && ! start_app_b "${n}"; then
    DOWN[appb]="your app's build ${PLAN[app_b_name]} ${APP_WHY}"
    app_refuse "app~${PLAN[app_b_name]}" "${APP_WHY}" # the first block: bad input, exit 2
    log "GOMAXPROCS=${n}: ${DOWN[appb]}; its twins are not measured in this block"
    stop_app_b
  fi
  [[ -z "${PLAN[nginx_setups]}" ]] || start_nginx "${n}"
  [[ -z "${PLAN[vnginx_setups]}" ]] || start_variant_nginx "${n}"
  [[ -z "${PLAN[front_ends]}" ]] || start_front_ends "${n}"
  if [[ -n "${PLAN[fasthttp_setups]}" ]] && ! start_fasthttp "${n}"; then
    DOWN[fasthttp]="$(not_started "the fasthttp server" "$(server_log fasthttp "${n}")")"
    if [[ -n "${TARGET}" ]]; then target_stop fasthttp; else stop_process "${FASTHTTP_PID}" "fasthttp server"; fi
    FASTHTTP_PID=""
  fi
  if [[ -n "${PLAN[node_setups]}" ]] && ! start_node "${n}"; then
    DOWN[node]="$(not_started "the Node server" "$(server_log node "${n}")")"
    stop_node
  fi
}

# wait_answer URL PID DEADLINE: true once URL gives any HTTP answer; false if PID dies or time is up.
wait_answer() {
  local code
  while ((SECONDS < $3)); do
    server_alive "$2" || return 1
    code="$(curl -k -s -o /dev/null -w '%{http_code}' --max-time 1 "$1")" || true
    [[ "${code}" == 000 ]] || return 0
    sleep 0.1
  done
  return 1
}

# server_pid NAME: the PID of a server of this pass (go, nginx or fasthttp); empty if none.
server_pid() {
  case "$1" in
    go) printf '%s\n' "${GO_PID}" ;;
    nginx) printf '%s\n' "${NGINX_PID}" ;;
    vnginx) printf '%s\n' "${VNGINX_PID}" ;;
    fasthttp) printf '%s\n' "${FASTHTTP_PID}" ;;
    node) printf '%s\n' "${NODE_PID}" ;;
    app | app-unix | app-fcgi) printf '%s\n' "${APP_PIDS[$1]:-}" ;;
    appb) printf '%s\n' "${APP_B_PID}" ;;
    haproxy | caddy | apache) printf '%s\n' "${FRONT_PIDS[$1]:-}" ;;
  esac
}

# down_reason SETUP: why SETUP cannot answer in this pass (a server it needs did not start); empty if none.
down_reason() {
  local name needs=()
  read -ra needs <<<"${PLAN[needs.$1]}"
  for name in "${needs[@]}"; do
    if [[ -n "${DOWN[${name}]:-}" ]]; then
      printf '%s\n' "${DOWN[${name}]}"
      return 0
    fi
  done
}

# cell_args N SETUP: the pass-ready --cell of SETUP: wait for its answer, capture `curl -sI`
# (-k: the TLS setups' certificate is the run's own, self-signed), and for a TLS setup one
# handshake's report (PROBE).
cell_args() {
  local n="$1" setup="$2" url file pid error rc=0
  url="${PLAN[url.${setup}]}"
  file="${RUN_DIR}/${setup}.gomaxprocs-${n}.headers.txt"
  ((BLOCK == 1)) || file="${WORK}/${setup}.headers.txt" # later blocks: checked, not kept
  pid="$(server_pid "${PLAN[server.${setup}]}")"
  error="$(down_reason "${setup}")"
  PROBE=()
  APP_BODY=()
  H2_BODY=()
  if [[ -n "${error}" ]]; then
    CELL=(--cell "${setup}" 0 "" "${error}")
  elif is_app_setup "${setup}" && wait_answer "${url}" "${pid}" "${CELLS_DEADLINE}"; then
    app_capture "${setup}" "${url}" "${file}" || rc=$? # a GET: the app's status, headers and body
    error=""
    ((rc == 0)) || error="curl ${url} failed with exit status ${rc}"
    CELL=(--cell "${setup}" 1 "${file}" "${error}")
  elif is_front_end_setup "${setup}" && wait_answer "${url}" "${pid}" "${CELLS_DEADLINE}"; then
    front_capture "${setup}" "${url}" "${file}" || rc=$? # a GET: its status, its own header block, go-http's body?
    error=""
    ((rc == 0)) || error="curl ${url} failed with exit status ${rc}"
    CELL=(--cell "${setup}" 1 "${file}" "${error}")
  elif is_h2_setup "${setup}" && wait_answer "${url}" "${pid}" "${CELLS_DEADLINE}"; then
    h2_capture "${setup}" "${url}" "${file}" || rc=$? # a GET over HTTP/2: status, header fields, body
    tls_probe "${setup}"
    error=""
    ((rc == 0)) || error="curl --http2 ${url} failed with exit status ${rc}"
    CELL=(--cell "${setup}" 1 "${file}" "${error}")
  elif wait_answer "${url}" "${pid}" "${CELLS_DEADLINE}"; then
    curl -k -sI --max-time "${CURL_MAX_TIME_S}" "${url}" >"${file}" || rc=$?
    tls_probe "${setup}"
    error=""
    ((rc == 0)) || error="curl -sI ${url} failed with exit status ${rc}"
    CELL=(--cell "${setup}" 1 "${file}" "${error}")
  else
    error="no HTTP answer from ${url} within ${READY_TIMEOUT_S}s"
    server_alive "${pid}" || error="server exited before answering ${url} (see logs/)"
    CELL=(--cell "${setup}" 0 "" "${error}")
  fi
}

# check_cells N: capture every setup's headers, record them and the servers with one
# `pass-ready`, and read its verdicts: fills USABLE and NGINX_WORKERS.
check_cells() {
  local n="$1" setup output verdict text name
  local args=(pass-ready --gomaxprocs "${n}")
  [[ -z "${GO_PID}" ]] || args+=(--go-pid "${GO_PID}" --go-log "${RUN_DIR}/$(server_log go "${n}")")
  [[ -z "${NGINX_PID}" ]] || args+=(--nginx-pid "${NGINX_PID}")
  [[ -z "${VNGINX_PID}" ]] || args+=(--variant-nginx-pid "${VNGINX_PID}")
  [[ -z "${FASTHTTP_PID}" ]] || args+=(--fasthttp-pid "${FASTHTTP_PID}")
  [[ -z "${NODE_PID}" ]] || args+=(--node-pid "${NODE_PID}")
  for name in "${!APP_PIDS[@]}"; do
    [[ -z "${APP_PIDS[${name}]}" ]] || args+=(--app-pid "${name}" "${APP_PIDS[${name}]}")
  done
  [[ -z "${APP_B_PID}" ]] || args+=(--app-b-pid "${APP_B_PID}")
  for name in "${!FRONT_PIDS[@]}"; do
    [[ -z "${FRONT_PIDS[${name}]}" ]] || args+=(--front-end-pid "${name}" "${FRONT_PIDS[${name}]}")
  done
  CELLS_DEADLINE=$((SECONDS + READY_TIMEOUT_S))
  for setup in "${SETUPS[@]}"; do
    cell_args "${n}" "${setup}"
    args+=("${CELL[@]}" "${PROBE[@]}" "${APP_BODY[@]}" "${H2_BODY[@]}")
  done
  ask "${args[@]}" || die 1 "could not record block ${BLOCK} GOMAXPROCS=${n} in the manifest"
  USABLE=()
  for output in "${ANSWER[@]}"; do
    read -r verdict setup text <<<"${output}"
    case "${verdict}" in
      nginx_workers) read -ra NGINX_WORKERS <<<"${setup} ${text}" ;;
      variant_nginx_workers) read -ra VNGINX_WORKERS <<<"${setup} ${text}" ;;
      node_workers) read -ra NODE_WORKERS <<<"${setup} ${text}" ;;
      measure)
        USABLE+=("${setup}")
        [[ -z "${text}" ]] || log "${setup} GOMAXPROCS=${n}: ${text}"
        ;;
      skip)
        app_refuse "${setup}" "${text}" # the first block: bad input, exit 2
        log "${setup} GOMAXPROCS=${n} block ${BLOCK}: ${text}; the run goes on without it"
        SKIPPED+=("${setup} GOMAXPROCS=${n} block ${BLOCK}: ${text}")
        ;;
    esac
  done
  APP_CHECKED=1
}

# servers_running SETUP: true while every process SETUP depends on is running.
servers_running() {
  local name pid needs=() pids=()
  read -ra needs <<<"${PLAN[needs.$1]}"
  for name in "${needs[@]}"; do
    pid="$(server_pid "${name}")"
    [[ -n "${pid}" ]] || return 1
    pids+=("${pid}")
  done
  server_alive "${pids[@]}" # one round trip to the target for all of them
}
