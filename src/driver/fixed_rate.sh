# fixed_rate.sh: the fixed-rate latency phase: vegeta built in preflight (and copied to the clients), then after the throughput blocks, blocks of one round at each rate.
# Sourced by run_bench.sh (its settings and state are there); not run on its own.
# shellcheck shell=bash

# build_vegeta: the pinned vegeta, built once with the run's Go into the cache (bench/vegeta_build.py);
# with --client-hosts copied into each remote client's work dir (sha256 checked there; exit 2 if one cannot take it).
build_vegeta() {
  ((PLAN[rate_phase])) || return 0
  VEGETA="$(PYTHONPATH="${ROOT}/src${PYTHONPATH:+:${PYTHONPATH}}" python3 -m wrkreport.bench.vegeta_build)" ||
    die 1 "could not build vegeta for the fixed-rate phase (see above; --rates off runs without it)"
  [[ -z "${CLIENTS_STATE}" ]] || helper clients-vegeta --state "${CLIENTS_STATE}" --plan "${WORK}/plan.json" --vegeta "${VEGETA}" || exit
}

# record_vegeta: vegeta's version in the manifest, as wrk's.
record_vegeta() {
  [[ -z "${VEGETA}" ]] || helper vegeta-record --run "${RUN_DIR}" --vegeta "${VEGETA}" || die 1 "could not record vegeta's version"
}

# rate_warm_up RATE SETUP...: vegeta at RATE for a moment per usable setup of the phase, results not kept (connections
# opened, caches warm), through the helper with the measurement's own command; with --client-hosts on every client at once.
rate_warm_up() {
  local rate="$1" setup rc line clients=()
  shift
  [[ -z "${CLIENTS_STATE}" ]] || clients=(--clients "${CLIENTS_STATE}")
  for setup in "$@"; do
    contains "${setup}" "${USABLE[@]}" || continue
    rc=0
    ask rate-warm-up --setup "${setup}" --rate "${rate}" --vegeta "${VEGETA}" --work-dir "${WORK}" "${clients[@]}" "${APP_RATE_ARGS[@]}" || rc=$?
    ((rc != 130 && rc != 143)) || exit "${rc}"
    ((rc == 0)) || die 1 "could not run the fixed-rate warm-up of ${setup} (exit status ${rc})"
    for line in "${ANSWER[@]}"; do
      log "fixed-rate warm-up of ${setup}: ${line}"
    done
  done
}

# measure_rate N SETUP RATE [HIGH]: one fixed-rate measurement through the helper's `measure-rate`
# (its .vegeta.csv.gz and .cpu.json, its manifest entry in fixed_rate_measurements); HIGH: a step of the capacity search,
# or `check`: the measurement at the capacity found, after the search.
measure_rate() {
  local n="$1" setup="$2" rate="$3" stem rc=0 clients=() hosts=() i search=()
  case "${4:-}" in
    "") ;;
    check) search=(--capacity-check) ;;
    *) search=(--search-high "$4") ;;
  esac
  stem="${setup}.gomaxprocs-${n}.block-${BLOCK}.run-${BLOCK}.rate-${rate}"
  STAGE="${setup} GOMAXPROCS=${n} fixed-rate block ${BLOCK} at ${rate} req/s (its partial output was discarded)"
  CURRENT_FILES=("${RUN_DIR}/${stem}.vegeta.csv.gz" "${RUN_DIR}/${stem}.cpu.json")
  if [[ -n "${CLIENTS_STATE}" ]]; then
    clients=(--clients "${CLIENTS_STATE}")
    read -ra hosts <<<"${PLAN[client_hosts]}"
    for ((i = 1; i <= ${#hosts[@]}; i++)); do
      CURRENT_FILES+=("${RUN_DIR}/${stem}.client-${i}.vegeta.csv.gz")
    done
  fi
  PROGRESS_OPEN=1
  ask measure-rate --gomaxprocs "${n}" --setup "${setup}" --block "${BLOCK}" --rate "${rate}" --vegeta "${VEGETA}" --work-dir "${WORK}" "${clients[@]}" "${search[@]}" "${APP_RATE_ARGS[@]}" || rc=$?
  ((rc != 130 && rc != 143)) || exit "${rc}"
  ((rc == 0)) || die 1 "could not run or record ${stem} (exit status ${rc})"
  CURRENT_FILES=()
  PROGRESS_OPEN=0
  MEASURED=$((MEASURED + 1))
}

# run_rate_block N RATES: a block of the phase at GOMAXPROCS=N: servers started, every setup checked,
# a warm-up, then every setup once per rate (comma list) in shuffled orders, the capacity search; when N takes no
# more blocks (capacity_more) the capacity check and GOING[N]=0; servers stopped.
run_rate_block() {
  local n="$1" line rate setup order=()
  STAGE="the start of fixed-rate block ${BLOCK} GOMAXPROCS=${n}"
  ask rate-pass-start --gomaxprocs "${n}" --block "${BLOCK}" --rates "$2" || die 1 "could not record fixed-rate block ${BLOCK} GOMAXPROCS=${n}"
  local lines=("${ANSWER[@]}")
  start_servers "${n}"
  check_cells "${n}"
  read -ra order <<<"${lines[0]#* }"
  rate_warm_up "${2%%,*}" "${order[@]}"
  for line in "${lines[@]}"; do
    read -r rate line <<<"${line}"
    read -ra order <<<"${line}"
    for setup in "${order[@]}"; do
      contains "${setup}" "${USABLE[@]}" || continue
      if servers_running "${setup}"; then
        measure_rate "${n}" "${setup}" "${rate}"
      else
        drop_setup "${n}" "${setup}" "its server exited during the fixed-rate block (see logs/)"
      fi
    done
  done
  read -ra order <<<"${lines[0]#* }"
  search_capacity "${n}" "${order[@]}"
  if ! capacity_more "${n}" "${order[@]}"; then
    check_capacity "${n}" "${order[@]}"
    GOING[${n}]=0
  fi
  end_block "${n}"
}

# capacity_more N SETUP...: after block BLOCK's search at GOMAXPROCS=N, the helper's `capacity-more`
# (bench/capacity_rule.py: its least blocks, then more while a capacity or capacity ratio is wider than
# --capacity-precision and --max-time allows, up to PLAN[rate_blocks_max]); true when N takes another block.
capacity_more() {
  local n="$1" joined going=0 k after=0
  shift
  for k in "${GOMAXPROCS_LIST[@]}"; do # the blocks another one must leave time for: this round's still to run, and the next round's
    ((after == 0 || ${GOING[${k}]:-0} == 0)) || going=$((going + 1))
    ((${GOING[${k}]:-0} == 0)) || going=$((going + 1))
    [[ "${k}" != "${n}" ]] || after=1
  done
  printf -v joined '%s,' "$@"
  ask capacity-more --gomaxprocs "${n}" --setups "${joined%,}" --going "${going}" ||
    die 1 "could not decide on another fixed-rate block at GOMAXPROCS=${n}"
  [[ "${ANSWER[0]:-}" != more ]] || return 0
  ((PLAN[rate_blocks_max] == PLAN[rate_blocks])) || log "fixed rate GOMAXPROCS=${n}: no more blocks after block ${BLOCK}: ${ANSWER[0]#stop }"
  return 1
}

# search_capacity N SETUP...: this block's capacity search at --slo (core/capacity.py): rounds of the helper's
# `capacity-next`, each one measurement per setup still searching (in a shuffled order), until none is left.
search_capacity() {
  ((PLAN[capacity_search])) || return 0
  while capacity_round "$1" next "${@:2}"; do :; done
}

# check_capacity N SETUP...: after the last block's search at N, each setup measured once more, for PLAN[check_duration_s],
# at the capacity found over the blocks (the helper's `capacity-check`; none for a bound): the figure the report gives,
# measured again; one that missed the objective again lower, while the helper asks (at most the run's check_tries).
check_capacity() {
  ((PLAN[capacity_search])) || return 0
  while capacity_round "$1" check "${@:2}"; do :; done
}

# capacity_round N next|check SETUP...: the helper's `capacity-next` (lines SETUP RATE HIGH: search steps) or
# `capacity-check` (lines SETUP RATE) for the usable setups, each line measured while its setup's servers run;
# status 1 when nothing was asked for.
capacity_round() {
  local n="$1" kind="$2" setup rate high line joined searching=()
  shift 2
  for setup in "$@"; do
    ! contains "${setup}" "${USABLE[@]}" || searching+=("${setup}")
  done
  ((${#searching[@]})) || return 1
  printf -v joined '%s,' "${searching[@]}"
  ask "capacity-${kind}" --gomaxprocs "${n}" --block "${BLOCK}" --setups "${joined%,}" ||
    die 1 "could not plan the capacity ${kind} of fixed-rate block ${BLOCK} GOMAXPROCS=${n}"
  ((${#ANSWER[@]})) || return 1
  local lines=("${ANSWER[@]}")
  for line in "${lines[@]}"; do
    read -r setup rate high <<<"${line}"
    if servers_running "${setup}"; then
      measure_rate "${n}" "${setup}" "${rate}" "${high:-check}"
    else
      drop_setup "${n}" "${setup}" "its server exited during the fixed-rate block (see logs/)"
    fi
  done
}

# run_rate_phase: after the throughput blocks, PLAN[rate_blocks] blocks per GOMAXPROCS value and more while
# capacity_more says so (alternating, as the throughput blocks), at the rates `rate-plan` gives for each.
run_rate_phase() {
  ((PLAN[rate_phase])) || return 0
  local n b rates=() joined then_search="" how_many="${PLAN[rate_blocks]} block(s)"
  local -A at=() GOING=()
  ((PLAN[capacity_search] == 0)) || then_search="; then each block searches every setup's capacity with ${PLAN[slo]}, checked after the last for ${PLAN[check_duration_s]}s (${PLAN[check_tries]} tries at most)"
  ((PLAN[rate_blocks_max] == PLAN[rate_blocks])) ||
    how_many="${PLAN[rate_blocks]} to ${PLAN[rate_blocks_max]} blocks (more while a capacity interval is wider than +/-${PLAN[capacity_precision]}%)"
  for n in "${GOMAXPROCS_LIST[@]}"; do
    ask rate-plan --gomaxprocs "${n}" || die 1 "could not plan the fixed-rate phase at GOMAXPROCS=${n}"
    read -ra rates <<<"${ANSWER[0]:-}"
    if ((${#rates[@]} == 0)); then
      log "fixed rate GOMAXPROCS=${n}: no rate (${ANSWER[1]:-}); not measured"
      continue
    fi
    printf -v joined '%s,' "${rates[@]}"
    at[${n}]="${joined%,}"
    log "fixed rate GOMAXPROCS=${n}: ${ANSWER[1]}; ${how_many} of ${PLAN[rate_duration_s]}s per setup and rate, open loop (vegeta)${then_search}"
    GOING[${n}]=1
  done
  for ((b = 1; b <= PLAN[rate_blocks_max]; b++)); do
    BLOCK="${b}"
    for n in "${GOMAXPROCS_LIST[@]}"; do
      if ((${GOING[${n}]:-0})); then
        run_rate_block "${n}" "${at[${n}]}"
      fi
    done
  done
}
