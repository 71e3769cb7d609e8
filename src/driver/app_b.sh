# app_b.sh: --app-b, the app's second build: started per block beside the first (its own
# process group, its twin app~NAME's port, GOMAXPROCS=N, ready when it answers, log capped), stopped
# with its whole group; its twins are measured in the same rounds as app and nginx-app.
# Sourced by run_bench.sh (its settings and state are there); not run on its own.
# shellcheck shell=bash

# start_app_b N: --app-b's command line ({port}: app~NAME's port) as start_app runs --app's;
# false with APP_WHY when it exits or does not answer in time.
start_app_b() {
  local n="$1" twin="app~${PLAN[app_b_name]}" command="${PLAN[app_b_command]}"
  APP_B_LOG="${RUN_DIR}/$(server_log "app-${PLAN[app_b_name]}" "${n}")"
  command="${command//\{port\}/${PLAN[port.${twin}]}}"
  start_in_group env GOMAXPROCS="${n}" "${SERVER_PIN[@]}" bash -c "${command}" </dev/null >>"${APP_B_LOG}" 2>&1
  APP_B_PID="${GROUP_PID}"
  app_ready "${APP_B_PID}" "${PLAN[url.${twin}]}"
}

# stop_app_b: stop the B build's whole process group (stop_group).
stop_app_b() {
  [[ -n "${APP_B_PID}" ]] || return 0
  stop_group "${APP_B_PID}" "your app's build ${PLAN[app_b_name]}"
  APP_B_PID=""
}
