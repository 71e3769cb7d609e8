# cleanup.sh: stopping only the PIDs this script started, and the EXIT trap's cleanup.
# Sourced by run_bench.sh (its settings and state are there); not run on its own.
# shellcheck shell=bash

# --- Stopping: only the PIDs this script started ------------------------------------------

# stop_process PID NAME [GRACE_S]: SIGTERM, up to STOP_TIMEOUT_S for it to exit, then SIGKILL;
# reap it. GRACE_S: first wait that long for it to exit on its own (it was asked another way).
stop_process() {
  local pid="$1" name="$2" grace="${3:-0}"
  if ((grace == 0)) || ! gone_within "${pid}" "${grace}"; then
    kill -TERM "${pid}" 2>/dev/null || true
    if ! gone_within "${pid}" "${STOP_TIMEOUT_S}"; then
      log "${name} (pid ${pid}) still running ${STOP_TIMEOUT_S}s after SIGTERM: SIGKILL"
      kill -KILL "${pid}" 2>/dev/null || true
    fi
  fi
  wait "${pid}" 2>/dev/null || true
}

# kill_outliving -F|-G PATTERN PID...: SIGKILL each PID still running whose command line
# matches PATTERN (grep -F fixed text, -G regexp): a worker that outlived its stopped parent,
# still ours; a PID reused by another program is left alone.
kill_outliving() {
  local kind="$1" pattern="$2" pid
  shift 2
  for pid in "$@"; do
    if is_running "${pid}" && grep -q "${kind}" -e "${pattern}" "/proc/${pid}/cmdline" 2>/dev/null; then
      kill -KILL "${pid}" 2>/dev/null || true
    fi
  done
}

# stop_node: stop nodehello by its PID (the primary stops its cluster workers); a worker
# outliving it (the primary killed) is killed by its recorded PID, if it is still nodehello.
stop_node() {
  [[ -n "${NODE_PID}" ]] || return 0
  if [[ -n "${TARGET}" ]]; then
    target_stop node
    NODE_PID=""
    NODE_WORKERS=()
    return 0
  fi
  stop_process "${NODE_PID}" "Node server"
  kill_outliving -F "${NODE_SOURCE}" "${NODE_WORKERS[@]}"
  NODE_PID=""
  NODE_WORKERS=()
}

stop_servers() {
  if [[ -n "${TARGET}" ]]; then # by the PIDs server_machine.sh recorded, in the same order as here
    stop_variant_nginx
    [[ -z "${NGINX_PID}${FASTHTTP_PID}${NODE_PID}${APP_PIDS[app]:-}${GO_PID}" ]] || target_stop nginx fasthttp node app go
    NGINX_PID="" FASTHTTP_PID="" NODE_PID="" GO_PID=""
    APP_PIDS[app]=""
    NGINX_WORKERS=() NODE_WORKERS=()
    return 0
  fi
  if [[ -n "${NGINX_PID}" ]]; then
    stop_process "${NGINX_PID}" "nginx master"
    # The master stops its workers; a worker outliving it (master killed) is ours too.
    kill_outliving -G '^nginx: worker' "${NGINX_WORKERS[@]}"
    NGINX_PID=""
    NGINX_WORKERS=()
  fi
  stop_variant_nginx
  if [[ -n "${FASTHTTP_PID}" ]]; then
    stop_process "${FASTHTTP_PID}" "fasthttp server"
    FASTHTTP_PID=""
  fi
  stop_node
  stop_front_ends # HAProxy, Caddy, Apache httpd: each with its whole process group (front_ends.sh)
  stop_apps # each with its whole process group (app.sh)
  stop_app_b # --app-b's, likewise (app_b.sh)
  if [[ -n "${GO_PID}" ]]; then
    stop_process "${GO_PID}" "Go server"
    GO_PID=""
  fi
  if [[ -n "${SOCKET}" ]]; then
    rm -f -- "${SOCKET}" "${HTTP_SOCKET}"
  fi
}

# On every exit: stop what this script started, mark an unfinished run, remove the work dir.
cleanup() {
  local status=$? state reason
  trap '' INT TERM
  trap - ERR
  set +e
  if [[ -n "${WRK_PID}" ]]; then
    kill -TERM "${WRK_PID}" 2>/dev/null
    wait "${WRK_PID}" 2>/dev/null
  fi
  [[ -z "${HELPER_PROC}" ]] || kill -TERM "${HELPER_PROC}" 2>/dev/null # ends a measurement: wrk gets the signal
  stop_helper
  if [[ -n "${TARGET}" ]]; then
    target_cleanup # every server there by its PID, and the work dir; retried when the link is down
  else
    stop_servers
  fi
  clients_down
  ssh_close_all
  ((${#CURRENT_FILES[@]} == 0)) || rm -f -- "${CURRENT_FILES[@]}"
  if [[ -n "${RUN_DIR}" ]] && ((!FINISHED)); then
    case "${status}" in
      130) state=interrupted reason="interrupted by SIGINT" ;;
      143) state=interrupted reason="interrupted by SIGTERM" ;;
      *) state=failed reason="${FAIL_REASON:-exit status ${status}}" ;;
    esac
    [[ -z "${STAGE}" ]] || reason+=" during ${STAGE}"
    helper finish --run "${RUN_DIR}" --status "${state}" --reason "${reason}"
    log "run ${state}: ${reason}; ${MEASURED} completed measurement(s) kept in ${RUN_DIR}"
  fi
  [[ -z "${WORK}" ]] || rm -rf -- "${WORK}"
  exit "${status}"
}
