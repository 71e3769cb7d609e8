# preflight.sh: before the run: tools (installed as root), the plan, ulimit -n, the Go builds, the package, the work dir, ports, --tune.
# Sourced by run_bench.sh (its settings and state are there); not run on its own.
# shellcheck shell=bash

# --- Preflight ---------------------------------------------------------------------------

find_nginx() {
  if command -v nginx 2>/dev/null; then
    return 0
  fi
  [[ -x /usr/sbin/nginx ]] && printf '%s\n' /usr/sbin/nginx
}

# find_node: the Node.js binary (Debian's nodejs package installs node, and nodejs on older releases).
find_node() {
  command -v node 2>/dev/null || command -v nodejs 2>/dev/null
}

apt_package() {
  case "$1" in
    nginx)
      if apt-cache show nginx-light >/dev/null 2>&1; then echo nginx-light; else echo nginx; fi
      ;;
    go) echo golang-go ;;
    taskset) echo util-linux ;;
    node) echo nodejs ;;
    ab) echo apache2-utils ;;
    apache) echo apache2 ;;
    h2load) echo nghttp2-client ;;
    *) echo "$1" ;;
  esac
}

# install_tools TOOL...: apt-get install them as root, else print the command and exit 2.
install_tools() {
  local packages=() tool note
  if ! is_root || ! command -v apt-get >/dev/null 2>&1; then
    for tool in "$@"; do
      case "${tool}" in nginx) packages+=(nginx-light) ;; *) packages+=("$(apt_package "${tool}")") ;; esac
    done
    if command -v apt-get >/dev/null 2>&1; then
      note=""
      contains nginx "$@" && note=" (on releases without nginx-light: nginx)"
      contains taskset "$@" && note+=" (taskset, for --pin-client/--pin-server, comes with util-linux)"
      contains ab "$@" && note+=" (ab, for --load-generator ab, comes with apache2-utils)"
      contains apache "$@" && note+=" (Apache httpd comes with apache2)"
      die 2 "missing: $*. Install with: sudo apt-get update && sudo apt-get install -y ${packages[*]}${note}"
    fi
    die 2 "missing: $*. Install them with your package manager."
  fi
  log "missing: $*; installing with apt-get"
  apt-get update -qq >&2 || die 2 "apt-get update failed"
  for tool in "$@"; do
    packages+=("$(apt_package "${tool}")")
  done
  log "apt-get install ${packages[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >&2 ||
    die 2 "apt-get install ${packages[*]} failed"
  if contains nginx "$@"; then
    log "note: the nginx package may enable its own nginx service; this script never uses or touches it"
  fi
  local front
  for front in haproxy caddy apache; do
    ! contains "${front}" "$@" || log "note: the $(apt_package "${front}") package may enable its own service; this script never uses or touches it"
  done
}

require_python() {
  command -v python3 >/dev/null 2>&1 || install_tools python3
}

read_plan() {
  local text key value
  text="$(helper plan --root "${ROOT}" --save "${WORK}/plan.json" -- "$@")" || exit
  while read -r key value; do
    PLAN["${key}"]="${value}"
  done <<<"${text}"
  PLAN[go_setups]="${PLAN[go_setups]:-}"
  PLAN[nginx_setups]="${PLAN[nginx_setups]:-}"
  PLAN[fasthttp_setups]="${PLAN[fasthttp_setups]:-}"
  PLAN[node_setups]="${PLAN[node_setups]:-}"
  PLAN[vnginx_setups]="${PLAN[vnginx_setups]:-}"
  PLAN[app_setups]="${PLAN[app_setups]:-}"
  PLAN[front_ends]="${PLAN[front_ends]:-}"
  PLAN[appb_setups]="${PLAN[appb_setups]:-}"
  app_header_args
  READY_TIMEOUT_S="${PLAN[ready_timeout_s]}" # how long a server may take to answer after its start (--ready-timeout)
  read -ra SETUPS <<<"${PLAN[setups]}"
  read -ra LEVELS <<<"${PLAN[connections]}"
  read -ra GOMAXPROCS_LIST <<<"${PLAN[gomaxprocs]}"
  [[ -z "${PLAN[pin_client]:-}" ]] || CLIENT_PIN=(taskset -c "${PLAN[pin_client]}")
  [[ -z "${PLAN[pin_server]:-}" ]] || SERVER_PIN=(taskset -c "${PLAN[pin_server]}")
  VARIANT_PIN=("${SERVER_PIN[@]}")
}



preflight_tools() {
  local missing=() tool problems
  if [[ -n "${TARGET}" ]]; then # the servers' tools are the target's (open_target); here: wrk, curl, go
    target_preflight
    for tool in "${PLAN[load_generator]}" curl; do
      command -v "${tool}" >/dev/null 2>&1 || missing+=("${tool}")
    done
    if [[ -n "${PLAN[go_setups]}${PLAN[fasthttp_setups]}" ]] && ! command -v go >/dev/null 2>&1; then
      missing+=(go)
    fi
    ((${#missing[@]} == 0)) || install_tools "${missing[@]}"
    variant_preflight
    return 0
  fi
  NGINX="$(find_nginx)" || true
  if [[ -n "${PLAN[nginx_setups]}" && -z "${NGINX}" ]]; then
    missing+=(nginx)
  fi
  local generator=("${PLAN[load_generator]}")
  uses_local_client || generator=() # the clients' wrk: clients_preflight
  for tool in "${generator[@]}" curl; do
    command -v "${tool}" >/dev/null 2>&1 || missing+=("${tool}")
  done
  NODE="$(find_node)" || true
  if [[ -n "${PLAN[node_setups]}" && -z "${NODE}" ]]; then
    missing+=(node)
  fi
  if [[ -n "${PLAN[go_setups]}${PLAN[fasthttp_setups]}" ]] && ! command -v go >/dev/null 2>&1; then
    missing+=(go)
  fi
  if ((${#CLIENT_PIN[@]} + ${#SERVER_PIN[@]} > 0)) && ! command -v taskset >/dev/null 2>&1; then
    missing+=(taskset)
  fi
  local front
  for front in $(front_ends_missing); do # HAProxy, Caddy, Apache httpd: the packages of those a chosen setup needs
    missing+=("${front}")
  done
  if ((${#missing[@]} > 0)); then
    install_tools "${missing[@]}"
    NGINX="$(find_nginx)" || true
    NODE="$(find_node)" || true
  fi
  find_front_ends
  if [[ -n "${PLAN[nginx_setups]}" ]]; then
    problems="$(helper check-nginx --plan "${WORK}/plan.json" --nginx "${NGINX}")" || die 2 "${problems:-cannot check ${NGINX}}"
  fi
  variant_preflight
}

# Raise the open-files limit as far as allowed (root: up to NOFILE_CEILING, others: the hard
# limit); stop if --connections cannot fit.
raise_nofile() {
  local hard nr_open target need="${PLAN[needed_fds]}"
  if is_root; then
    nr_open="$(cat /proc/sys/fs/nr_open 2>/dev/null || echo "${NOFILE_CEILING}")"
    target=$((nr_open < NOFILE_CEILING ? nr_open : NOFILE_CEILING))
    ulimit -n "${target}" 2>/dev/null || true
  fi
  hard="$(ulimit -Hn)"
  ulimit -Sn "${hard}" 2>/dev/null || true
  NOFILE="$(ulimit -Sn)"
  if [[ "${NOFILE}" != unlimited ]] && ((NOFILE < need)); then
    die 2 "--connections ${PLAN[connections_max]} needs about ${need} open files (wrk, nginx and Go each hold one per connection), but ulimit -n is ${NOFILE} and cannot go higher (hard limit ${hard}); lower --connections or raise the hard limit"
  fi
  log "ulimit -n ${NOFILE}"
}

# build_servers: build the Go servers the chosen setups need.
build_servers() {
  # -buildvcs=false: no git stamp needed, and git refuses checkouts owned by another user.
  # For the target: a static binary for its architecture (from its uname -m), copied there.
  local cross=() where=""
  [[ -z "${TARGET}" ]] || cross=(env GOOS=linux "${TARGET_ARCH[@]}" CGO_ENABLED=0) where=" for ${TARGET} (${TARGET_ARCH[*]})"
  if [[ -n "${PLAN[go_setups]}" ]]; then
    GO_BIN="${WORK}/gohello"
    log "building the Go server (src/gohello)${where}"
    (cd "${GO_SOURCE}" && "${cross[@]}" go build -buildvcs=false -o "${GO_BIN}" .) || die 2 "go build failed in ${GO_SOURCE}"
    if [[ -n "${TARGET}" ]]; then
      target_copy "${GO_BIN}"
      GO_BIN="${TARGET_DIR}/gohello"
    fi
  fi
  [[ -n "${PLAN[fasthttp_setups]}" ]] || return 0
  FASTHTTP_BIN="${WORK}/gofasthttp"
  log "building the fasthttp server (src/gofasthttp)${where}"
  (cd "${FASTHTTP_SOURCE}" && "${cross[@]}" go build -buildvcs=false -o "${FASTHTTP_BIN}" .) ||
    die 2 "go build failed in ${FASTHTTP_SOURCE} (its module github.com/valyala/fasthttp comes from the Go module proxy, see go env GOPROXY; and it needs the Go version in its go.mod)"
  if [[ -n "${TARGET}" ]]; then
    target_copy "${FASTHTTP_BIN}"
    FASTHTTP_BIN="${TARGET_DIR}/gofasthttp"
  fi
}

# So that `./run_bench.sh && wrkreport build` works on a fresh machine. Best effort: the
# benchmark itself does not need it.
ensure_wrkreport() {
  # Runs, not just found: an editable install whose checkout was removed leaves a `wrkreport`
  # on PATH that only prints a traceback.
  wrkreport --version >/dev/null 2>&1 && return 0
  if command -v wrkreport >/dev/null 2>&1; then
    log "$(command -v wrkreport) does not run (an install from a removed checkout?); installing wrkreport from ${ROOT} with pip"
  else
    log "wrkreport is not installed; installing it from ${ROOT} with pip"
  fi
  if python3 -m pip install --quiet -e "${ROOT}" >"${WORK}/pip.log" 2>&1 && wrkreport --version >/dev/null 2>&1; then
    log "installed wrkreport ($(command -v wrkreport))"
    return 0
  fi
  install_wrkreport_venv && return 0
  log "warning: could not install wrkreport (last lines of pip's output below); the benchmark runs anyway"
  tail -n 5 "${WORK}/pip.log" >&2 || true
}

# A system Python that refuses pip (PEP 668, Debian 12): use ROOT/.venv and link its
# wrkreport into /usr/local/bin (root) or ~/.local/bin.
install_wrkreport_venv() {
  local venv="${ROOT}/.venv" bin_dir
  if ! python3 -m venv "${venv}" >>"${WORK}/pip.log" 2>&1; then
    if is_root && command -v apt-get >/dev/null 2>&1; then
      log "apt-get install python3-venv (for wrkreport's virtualenv)"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >>"${WORK}/pip.log" 2>&1 || return 1
      python3 -m venv "${venv}" >>"${WORK}/pip.log" 2>&1 || return 1
    else
      return 1
    fi
  fi
  "${venv}/bin/python" -m pip install --quiet -e "${ROOT}" >>"${WORK}/pip.log" 2>&1 || return 1
  if is_root; then bin_dir=/usr/local/bin; else bin_dir="${HOME}/.local/bin"; fi
  mkdir -p "${bin_dir}"
  [[ -e "${bin_dir}/wrkreport" ]] || ln -s "${venv}/bin/wrkreport" "${bin_dir}/wrkreport"
  log "installed wrkreport into ${venv}, linked as ${bin_dir}/wrkreport"
  command -v wrkreport >/dev/null 2>&1 || log "note: ${bin_dir} is not on PATH; use ${venv}/bin/wrkreport"
}

# The private work dir: the socket and nginx's prefix. As root the workers (another user)
# must traverse it and connect to the socket: see WORKER_USER_AS_ROOT.
prepare_work_dir() {
  local problem
  [[ -z "${TARGET}" ]] || return 0 # the target's: target_preflight
  SOCKET="${WORK}/go.sock"
  HTTP_SOCKET="${WORK}/gohttp.sock"
  local sockets=("${HTTP_SOCKET}") socket name names=()
  read -ra names <<<"${PLAN[app_processes]:-}"
  for name in "${names[@]}"; do # --app-unix's and --app-fcgi's sockets (none for a port)
    sockets+=("$(app_socket "${name}")")
  done
  for socket in "${sockets[@]}"; do
    if ((${#socket} > SUN_PATH_MAX)); then
      die 2 "Unix socket path ${socket} is longer than ${SUN_PATH_MAX} bytes; set TMPDIR to a shorter directory"
    fi
  done
  if [[ -n "${PLAN[front_ends]}" && ! "${WORK}" =~ ^[A-Za-z0-9_./+-]+$ ]]; then # HAProxy's, Caddy's, Apache httpd's files name it unquoted
    die 2 "work dir ${WORK}: HAProxy, Caddy and Apache httpd need a path of letters, digits and _ . / + - only; set TMPDIR to such a directory"
  fi
  mkdir -p "${WORK}/nginx/temp"
  local prefixes=("${WORK}/nginx" "${WORK}/nginx/temp")
  if [[ -n "${VARIANT_PREFIX}" ]]; then # --variant: its nginx's own prefix beside the run's
    mkdir -p "${VARIANT_PREFIX}/temp"
    prefixes+=("${VARIANT_PREFIX}" "${VARIANT_PREFIX}/temp")
  fi
  if is_root; then
    WORKER_GROUP="$(id -gn "${WORKER_USER_AS_ROOT}")" || die 2 "no user ${WORKER_USER_AS_ROOT} to run nginx workers as"
    chgrp "${WORKER_GROUP}" "${WORK}" "${prefixes[@]}"
    chmod 0710 "${WORK}" "${prefixes[@]}"
    if [[ -n "${PLAN[nginx_setups]}" ]]; then
      problem="$(helper check-reach --path "${WORK}" --user "${WORKER_USER_AS_ROOT}")" || die 2 "${problem}"
    fi
  fi
}

check_ports() {
  local busy line
  if [[ -n "${TARGET}" ]]; then
    target_ports
    return 0
  fi
  if ! busy="$(helper check-ports --plan "${WORK}/plan.json")"; then
    while IFS= read -r line; do
      log "${line}"
    done <<<"${busy}"
    die 2 "${busy//$'\n'/; }; nothing was started (choose other ports with --port NAME=PORT)"
  fi
}

# tune_kernel: with --tune, apply the article's sysctl values; each planned change is in the
# run's manifest (sysctl_changes) before the first is made, where no cleanup removes it.
tune_kernel() {
  ((PLAN[tune])) || return 0
  STAGE="--tune"
  log "--tune: applying the article's kernel settings (recorded in ${RUN_DIR}/manifest.json first)"
  helper tune --run "${RUN_DIR}"
}
