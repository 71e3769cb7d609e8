# variant.sh: --variant: the variant's own nginx beside the run's, its configuration, start and stop.
# Its twin setups (ORIGINAL~NAME) are measured in the same rounds as every other setup; this
# file only owns the second nginx: rendered from the same template with the twins' ports and
# the variant's settings, in its own prefix in the private work dir, started and stopped by
# its master's PID like the run's nginx.
# Sourced by run_bench.sh (its settings and state are there); not run on its own.
# shellcheck shell=bash

# variant_preflight: the variant's nginx binary (nginx=PATH, else the run's); a binary of its
# own is checked for the modules its twins need, as the run's is.
variant_preflight() {
  [[ -n "${PLAN[vnginx_setups]}" ]] || return 0
  local problems
  VARIANT_NGINX="${PLAN[variant_nginx]:-${NGINX}}"
  VARIANT_PREFIX="${WORK}/nginx-variant"
  [[ -z "${TARGET}" ]] || VARIANT_PREFIX="${TARGET_DIR}/nginx-variant" # --server-host: beside the run's nginx there
  [[ -z "${PLAN[variant_pin_server]:-}" ]] || VARIANT_PIN=(taskset -c "${PLAN[variant_pin_server]}")
  [[ -n "${PLAN[variant_nginx]:-}" ]] || return 0
  if [[ -n "${TARGET}" ]]; then # nginx=PATH names the target's binary: its -V read there
    on_host "${TARGET}" "$(shq "${VARIANT_NGINX}") -V 2>&1" >"${WORK}/target.variant-nginx-V" </dev/null ||
      die 2 "--variant ${PLAN[variant_name]}: ${VARIANT_NGINX} -V failed on ${TARGET}"
    problems="$(helper check-nginx --plan "${WORK}/plan.json" --nginx "${VARIANT_NGINX}" --nginx-v-file "${WORK}/target.variant-nginx-V" --variant)" ||
      die 2 "--variant ${PLAN[variant_name]} on ${TARGET}: ${problems:-cannot check ${VARIANT_NGINX}}"
    return 0
  fi
  problems="$(helper check-nginx --plan "${WORK}/plan.json" --nginx "${VARIANT_NGINX}" --variant)" ||
    die 2 "--variant ${PLAN[variant_name]}: ${problems:-cannot check ${VARIANT_NGINX}}"
}

# variant_record_args: target-record's options for the variant's nginx on the target (none
# without one): its -V as variant_preflight read it there, or the run's nginx's (target_preflight)
# when the variant runs the same binary.
variant_record_args() {
  [[ -n "${PLAN[vnginx_setups]}" ]] || return 0
  local file="${WORK}/target.variant-nginx-V"
  [[ -n "${PLAN[variant_nginx]:-}" ]] || file="${WORK}/target.nginx-V"
  printf '%s\n' --variant-nginx "${VARIANT_NGINX}" --variant-nginx-v-file "${file}"
}

# render_variant_nginx RLIMIT ARGS...: the variant's nginx.conf (RUN_DIR/nginx-variant.conf)
# from the same renderer (ARGS: the worker user here; with --server-host render_nginx_target's
# listen address, FastCGI parameters and worker user), checked by its own binary (nginx_test).
render_variant_nginx() {
  local rlimit="$1"
  shift
  [[ -n "${PLAN[vnginx_setups]}" ]] || return 0
  helper render-nginx --run "${RUN_DIR}" --template "${TEMPLATE}" --prefix "${VARIANT_PREFIX}" --socket "${SOCKET}" \
    --http-socket "${HTTP_SOCKET}" --rlimit "${rlimit}" --variant --out "${RUN_DIR}/nginx-variant.conf" "$@"
  nginx_test "${VARIANT_NGINX}" nginx-variant.conf "${VARIANT_PREFIX}" "the variant's nginx (${VARIANT_NGINX})"
}

# start_variant_nginx N: the variant's nginx master (nginx_master), on its own CPUs when pinned.
start_variant_nginx() {
  nginx_master VNGINX_PID nginx-variant "${VARIANT_NGINX}" nginx-variant.conf "${VARIANT_PREFIX}" "nginx-variant-error.gomaxprocs-$1.log" "${VARIANT_PIN[@]}"
}

# stop_variant_nginx: stop its master by PID; a worker outliving it is killed by its recorded PID.
stop_variant_nginx() {
  [[ -n "${VNGINX_PID}" ]] || return 0
  if [[ -n "${TARGET}" ]]; then
    target_stop nginx-variant # by its pid file there: SIGTERM, then its workers still running
  else
    stop_process "${VNGINX_PID}" "variant nginx master"
    kill_outliving -G '^nginx: worker' "${VNGINX_WORKERS[@]}"
  fi
  VNGINX_PID=""
  VNGINX_WORKERS=()
}
