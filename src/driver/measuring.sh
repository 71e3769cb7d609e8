# measuring.sh: the run: its directory and manifest, blocks of shuffled rounds (warm-up, one wrk per setup), the stopping rule, the end.
# Sourced by run_bench.sh (its settings and state are there); not run on its own.
# shellcheck shell=bash

# --- The run -----------------------------------------------------------------------------

start_run() {
  local nginx="${NGINX}"
  [[ -z "${TARGET}" ]] || nginx="" # the target's nginx -V: target_record
  local args=(init --plan "${WORK}/plan.json" --command-line "${COMMAND_LINE}" --nginx "${nginx}")
  [[ "${NOFILE}" == unlimited ]] || args+=(--ulimit-n "${NOFILE}")
  if [[ -n "${TARGET}" && -n "${PLAN[app_version]:-}" ]]; then # --app-version: where the app runs
    ssh_cmd -- "${TARGET}"
    timeout 20 "${SSH[@]}" "${PLAN[app_version]}" >"${WORK}/app.version" 2>&1 </dev/null || true
    args+=(--app-version-output "${WORK}/app.version")
  fi
  RUN_DIR="$(helper "${args[@]}")"
  if ((PLAN[adaptive])); then
    log "run ${RUN_DIR##*/}: ${PLAN[plan_words]}; writing ${RUN_DIR}"
    log "intervals: repeated 95% intervals, valid at whichever block from ${PLAN[min_blocks]} to ${PLAN[max_blocks]} the run stops (by its rule, --max-time or Ctrl-C)"
  else
    log "run ${RUN_DIR##*/}: ${PLAN[measurements]} measurements, about ${PLAN[estimate]}; writing ${RUN_DIR}"
  fi
  ((!PLAN[smoke_test])) || log "smoke test (--quick): one short measurement per cell, no interval claims; for figures run the default profile"
  if [[ -n "${TARGET}" ]]; then
    target_record
    [[ -z "${PLAN[nginx_setups]}" ]] || render_nginx_target
    return 0
  fi
  [[ -z "${PLAN[nginx_setups]}" ]] || render_nginx
  [[ -z "${PLAN[front_ends]}" ]] || render_front_ends
}


# drop_setup N SETUP REASON: measure SETUP no more in this pass; say so and record it.
drop_setup() {
  local kept=() item
  for item in "${USABLE[@]}"; do
    [[ "${item}" == "$2" ]] || kept+=("${item}")
  done
  USABLE=("${kept[@]}")
  log "$2 GOMAXPROCS=$1 block ${BLOCK}: $3"
  SKIPPED+=("$2 GOMAXPROCS=$1 block ${BLOCK}: $3")
  ask pass-note --gomaxprocs "$1" --note "$2: $3" || die 1 "could not record a note of block ${BLOCK} GOMAXPROCS=$1"
}

# wait_wrk: wait for the load generator (or the helper running it) started in the background as
# WRK_PID, so a signal interrupts at once; return its exit status.
wait_wrk() {
  local rc=0
  wait "${WRK_PID}" || rc=$?
  WRK_PID=""
  return "${rc}"
}

# wrk_args C SECONDS SETUP [OPTION...]: the load generator's command for SETUP's URL (after
# taskset when the client is pinned): wrk with the options given, or ab (keep-alive; -t
# before -n, since -t resets -n; -n large enough that the time limit ends the run;
# --timeout as -s), or h2load (-D seconds; -m streams for an h2 setup, --h1 for the others:
# the plan's h2load.SETUP; wrk's options are not given to it). --connection-per-request, or a new-connection setup (go-https-new ...):
# wrk sends "Connection: close" (not planned with ab: its HTTP/1.0 answers differ by server).
wrk_args() {
  local close=() keep=(-k) url="${PLAN[url.$3]}"
  if ((PLAN[connection_per_request])) || [[ "${PLAN[new_connection.$3]:-0}" == 1 ]]; then
    close=(-H "Connection: close")
    keep=()
  fi
  local headers=()
  ! is_app_setup "$3" || headers=("${APP_HEADER_ARGS[@]}") # --app-header: with every request to the app
  if [[ "${PLAN[load_generator]}" == h2load ]]; then
    local protocol=()
    read -ra protocol <<<"${PLAN[h2load.$3]}"
    WRK_ARGS=("${CLIENT_PIN[@]}" h2load "${protocol[@]}" "-t${PLAN[threads]}" "-c$1" -D "$2" "${url}")
    return 0
  fi
  if [[ "${PLAN[load_generator]}" == ab ]]; then
    WRK_ARGS=("${CLIENT_PIN[@]}" ab "${keep[@]}" "-c$1" -t "$2" -n "$(($2 * PLAN[ab_requests_per_s]))" -s "${PLAN[wrk_timeout_s]}" "${url}")
    return 0
  fi
  WRK_ARGS=("${CLIENT_PIN[@]}" wrk "${@:4}" "${close[@]}" "${headers[@]}" "-t${PLAN[threads]}" "-c$1" "-d$2s" --timeout "${PLAN[wrk_timeout_s]}s" "${url}")
}

# warm_up N C: a run of wrk per usable setup at C connections, output not kept.
warm_up() {
  local n="$1" c="$2" setup label="block ${BLOCK} GOMAXPROCS=$1"
  local seconds="${NEXT_WARMUP:-${PLAN[warmup_s]}}" # the stopping rule may drop it (decide)
  ((PLAN[sweep])) && label+=" c=${c}"
  [[ "${seconds}" != 0 && ${#USABLE[@]} -gt 0 ]] || return 0
  STAGE="the ${label} warm-up"
  log "warm-up ${label}: ${seconds}s per setup, not kept"
  for setup in "${USABLE[@]}"; do
    wrk_args "${c}" "${seconds}" "${setup}"
    if [[ -n "${CLIENTS_STATE}" ]]; then
      warm_up_clients "${setup}"
      continue
    fi
    "${WRK_ARGS[@]}" >/dev/null 2>"${WORK}/wrk.stderr" &
    WRK_PID=$!
    wait_wrk || log "warm-up of ${setup}: ${PLAN[load_generator]} failed: $(head -c 300 "${WORK}/wrk.stderr")"
  done
}

# measure N C SETUP K R: one wrk --latency (or ab) run (round K of the cell, R of the block)
# through the helper's `measure`, which prints the progress line, puts its stdout then
# stderr, verbatim, into the .wrk.txt (.ab.txt), wrk's latency histogram (histogram.lua)
# into the .hist.json (wrk only), and the CPU times into the .cpu.json, and records the
# measurement in the manifest.
measure() {
  local n="$1" c="$2" setup="$3" k="$4" stem label rc=0
  stem="${setup}.gomaxprocs-${n}"
  label="${setup} GOMAXPROCS=${n}"
  if ((PLAN[sweep])); then
    stem+=".c${c}"
    label+=" c=${c}"
  fi
  stem+=".block-${BLOCK}.run-${k}"
  wrk_args "${c}" "${PLAN[duration_s]}" "${setup}" --latency -s "${HIST_SCRIPT}"
  STAGE="${label} block ${BLOCK} run ${k} (its partial output was discarded)"
  local hist=()
  [[ "${PLAN[load_generator]}" != wrk ]] || hist=(--hist-file "${stem}.hist.json") # ab and h2load have no histogram
  CURRENT_FILES=("${RUN_DIR}/${stem}${PLAN[raw_suffix]}" "${RUN_DIR}/${stem}.cpu.json" "${RUN_DIR}/${stem}.hist.json")
  local clients=() counter=()
  tls_counter "${setup}"
  [[ -z "${TLS_COUNTER}" ]] || counter=(--tls-counter "${TLS_COUNTER}")
  if [[ -n "${CLIENTS_STATE}" ]]; then
    clients=(--clients "${CLIENTS_STATE}")
    client_files "${stem}"
  fi
  PROGRESS_OPEN=1
  ask measure --gomaxprocs "${n}" --connections "${c}" --setup "${setup}" --repeat "${k}" --block "${BLOCK}" --round "$5" \
    --file "${stem}${PLAN[raw_suffix]}" --cpu-file "${stem}.cpu.json" "${hist[@]}" --stderr "${WORK}/wrk.stderr" "${counter[@]}" "${clients[@]}" -- "${WRK_ARGS[@]}" || rc=$?
  ((rc != 130 && rc != 143)) || exit "${rc}"
  ((rc == 0)) || die 1 "could not run or record ${stem} (exit status ${rc})"
  CURRENT_FILES=()
  PROGRESS_OPEN=0
  MEASURED=$((MEASURED + 1))
}

# start_block N FIRST ROUNDS: record block BLOCK of GOMAXPROCS=N (rounds FIRST..) and its
# shuffled orders (ORDERS), start its servers, check every setup answers (USABLE).
start_block() {
  local n="$1" chosen=() setup kept=()
  STAGE="the start of block ${BLOCK} GOMAXPROCS=${n}"
  local args=(pass-start --gomaxprocs "${n}" --block "${BLOCK}" --first-round "$2" --rounds "$3")
  [[ -z "${NEXT_SETUPS}" ]] || args+=(--setups "${NEXT_SETUPS}")
  [[ -z "${NEXT_WARMUP}" || "${NEXT_WARMUP}" == "${PLAN[warmup_s]}" ]] || args+=(--warmup "${NEXT_WARMUP}")
  ask "${args[@]}" || die 1 "could not record block ${BLOCK} GOMAXPROCS=${n}"
  ORDERS=("${ANSWER[@]}")
  start_servers "${n}"
  check_cells "${n}"
  [[ -n "${NEXT_SETUPS}" ]] || return 0
  IFS=, read -ra chosen <<<"${NEXT_SETUPS}" # this block measures (and warms up) only these
  for setup in "${USABLE[@]}"; do
    ! contains "${setup}" "${chosen[@]}" || kept+=("${setup}")
  done
  USABLE=("${kept[@]}")
}

# measure_block N FIRST ROUNDS: for each connection level, warm up, then each round in its shuffled order.
measure_block() {
  local n="$1" i=0 r k c setup order=()
  # ORDERS: one line per (connection level, round), levels in turn (wrkreport.bench.manifest.new_pass).
  for c in "${LEVELS[@]}"; do
    warm_up "${n}" "${c}"
    for ((r = 1; r <= $3; r++)); do
      k=$(($2 + r - 1))
      read -ra order <<<"${ORDERS[i]}"
      i=$((i + 1))
      for setup in "${order[@]}"; do
        contains "${setup}" "${USABLE[@]}" || continue
        if servers_running "${setup}"; then
          measure "${n}" "${c}" "${setup}" "${k}" "${r}"
        else
          drop_setup "${n}" "${setup}" "its server exited during the block (see logs/); runs from c=${c} run ${k} on not measured in it"
        fi
      done
    done
  done
}

# end_block N: stop the block's servers and record its end.
end_block() {
  STAGE="stopping the block ${BLOCK} GOMAXPROCS=$1 servers"
  stop_servers
  [[ -z "${TARGET}" ]] || fetch_logs "$1"
  ask pass-end --gomaxprocs "$1" || die 1 "could not record the end of block ${BLOCK} GOMAXPROCS=$1"
}

# run_block N FIRST ROUNDS: one block, from starting the servers to stopping them.
run_block() {
  start_block "$@"
  measure_block "$@"
  end_block "$1"
}

# stop_rule N: after a block of the default profile, ask the helper whether the precision
# target is met or time is up; true when the run should stop.
# Going on, NEXT_BLOCK is the next block as `decide` planned it: GOMAXPROCS ROUNDS WARMUP SETUPS.
stop_rule() {
  local verdict worst reason next
  ((PLAN[adaptive])) || return 1
  ask decide || die 1 "could not assess the precision after block ${BLOCK}"
  read -r verdict worst reason <<<"${ANSWER[0]}"
  local what="worst ratio"
  [[ "${PLAN[rule]:-}" != verdict ]] || what="widest deciding ratio"
  if [[ "${worst}" == - ]]; then worst="no interval yet"; else worst="${what} +/-${worst}%"; fi
  [[ -z "${ANSWER[1]:-}" ]] || log "after block ${BLOCK} GOMAXPROCS=$1: ${ANSWER[1]}"
  if [[ "${verdict}" == stop ]]; then
    log "after block ${BLOCK} GOMAXPROCS=$1: ${worst} (target +/-${PLAN[precision_pct]}%)"
    log "stopping: ${reason}"
    return 0
  fi
  NEXT_BLOCK="${reason}"
  read -ra next <<<"${NEXT_BLOCK}"
  log "after block ${BLOCK} GOMAXPROCS=$1: ${worst} (target +/-${PLAN[precision_pct]}%); next: GOMAXPROCS=${next[0]}, ${next[3]//,/ } setups, ${next[1]} rounds, warm-up ${next[2]}s"
  return 1
}

# run_blocks: a fixed number of blocks alternating GOMAXPROCS values, or (the stopping
# rule) blocks where `decide` sends them until it says stop.
run_blocks() {
  local n first rounds
  if ((PLAN[adaptive])); then
    run_allocated_blocks
    return 0
  fi
  BLOCK=0
  while :; do
    BLOCK=$((BLOCK + 1))
    first=$(((BLOCK - 1) * PLAN[rounds_per_block] + 1))
    rounds="${PLAN[rounds_per_block]}"
    if ((!PLAN[adaptive] && first + rounds - 1 > PLAN[repeats])); then
      rounds=$((PLAN[repeats] - first + 1))
    fi
    for n in "${GOMAXPROCS_LIST[@]}"; do
      run_block "${n}" "${first}" "${rounds}"
      ! stop_rule "${n}" || return 0
    done
    ((PLAN[adaptive] || BLOCK < PLAN[blocks])) || return 0
  done
}

# run_allocated_blocks: the first block at the first GOMAXPROCS value with every setup, each
# next one as `decide` planned it (bench/allocation.py): its GOMAXPROCS value, setups, rounds
# and warm-up; blocks and rounds are numbered per GOMAXPROCS value.
run_allocated_blocks() {
  local n="${GOMAXPROCS_LIST[0]}" rounds="${PLAN[rounds_per_block]}" first
  local -A blocks=() rounds_done=()
  while :; do
    BLOCK=$((${blocks[${n}]:-0} + 1))
    blocks[${n}]="${BLOCK}"
    first=$((${rounds_done[${n}]:-0} + 1))
    run_block "${n}" "${first}" "${rounds}"
    rounds_done[${n}]=$((first + rounds - 1))
    ! stop_rule "${n}" || return 0
    read -r n rounds NEXT_WARMUP NEXT_SETUPS <<<"${NEXT_BLOCK}"
    [[ "${NEXT_SETUPS}" != all ]] || NEXT_SETUPS=""
  done
}

finish_run() {
  local line item joined
  if ((MEASURED == 0)); then
    printf -v joined '%s; ' "${SKIPPED[@]}"
    die 1 "no setup could be measured: ${joined%; }"
  fi
  ask finish --status complete || die 1 "could not finish the manifest"
  FINISHED=1
  stop_helper
  for line in "${ANSWER[@]}"; do
    log "${line}"
  done
  for item in "${SKIPPED[@]}"; do
    log "warning: not measured: ${item}"
  done
  log "complete in $((SECONDS / 60))m $((SECONDS % 60))s: ${RUN_DIR}"
  log "next: wrkreport build"
}
