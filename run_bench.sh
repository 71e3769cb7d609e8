#!/usr/bin/env bash
# run_bench.sh: measure what putting nginx in front of a Go server costs, as in the 2013
# article "Benchmarking Nginx with Go". Four setups -- Go net/http alone, and nginx in
# front of it over HTTP, FastCGI/TCP and FastCGI/Unix socket -- (and on request four
# more, Node's http module among them) are loaded with wrk (or ApacheBench) at each
# GOMAXPROCS value and connection level, on 127.0.0.1 only, recording the CPU time the
# servers and the load generator use. Every result lands in
# OUT/<run-id>/ as documented in docs/raw-format.md; `wrkreport build` turns it into a report.
#
# This script orchestrates processes only, one function per step of a run; plans, JSON,
# arithmetic and text formatting are in src/wrkreport/bench/ (standard library only, run
# from the checkout). The contract between the two: docs/driver.md.
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly ROOT
readonly TEMPLATE="${ROOT}/templates/nginx.conf.tmpl"
readonly GO_SOURCE="${ROOT}/src/gohello"
readonly HIST_SCRIPT="${ROOT}/src/wrkreport/bench/histogram.lua" # wrk -s: its done() writes the latency histogram
readonly TARGET_SCRIPT="${ROOT}/src/wrkreport/bench/target.sh"  # copied to the target: starts, checks, stops there
readonly FASTHTTP_SOURCE="${ROOT}/src/gofasthttp"
readonly NODE_SOURCE="${ROOT}/src/nodehello/server.js"
readonly READY_TIMEOUT_S=10       # how long a server may take to answer after start
readonly STOP_TIMEOUT_S=5         # SIGTERM grace before SIGKILL
readonly CURL_MAX_TIME_S=5        # per curl -sI header capture
readonly NGINX_RLIMIT_MAX=200000  # the article's worker_rlimit_nofile
readonly NOFILE_CEILING=1048576   # how far root raises ulimit -n (below fs.nr_open)
readonly SUN_PATH_MAX=107         # longest Unix socket path the kernel takes
readonly TARGET_CLEANUP_S=60      # how long cleanup keeps trying to reach a target it lost
readonly LOG_FETCH_CAP=1048576    # bytes of a target's log fetched into logs/ (nginx's cap)
readonly QUIET_MARK=wrkreport-quiet-login # quiet_login's probe: all a quiet login prints for `echo` of it
# As root, nginx workers run as this user. The Unix sockets and the private work dir are
# group-owned by its group with modes 0660 and 0710: the workers may connect to the sockets
# and traverse the directory, nothing else; other users get nothing. (The alternative, a
# `user root` directive, would run every worker as root.)
readonly WORKER_USER_AS_ROOT=nobody

usage() {
  cat <<'EOF'
Usage: ./run_bench.sh [options]

Measure Go net/http alone and behind nginx (HTTP proxy, FastCGI over TCP, FastCGI over a
Unix socket) with wrk, on 127.0.0.1, in blocks. A block, at one GOMAXPROCS value: start the
Go server and a private nginx, check every setup answers (curl -sI, the first block's saved
verbatim); then for each connection level: warm up every setup, run ROUNDS rounds of
`wrk --latency`, every setup once per round in a shuffled order, recording the CPU time
(user, system) the servers and wrk used in each run; stop the servers. Blocks alternate
GOMAXPROCS values (1, 2, 1, 2, ...). The default profile runs blocks until every overhead
ratio's 95% interval is within --precision (at least 7 blocks per GOMAXPROCS) or another
block would pass --max-time.

Results go to OUT/<run-id>/ (UTC start time; -2, -3 if taken; nothing is overwritten),
and OUT/latest points at the newest run. Then: wrkreport build

Options (in brackets: the environment variable that sets the same; an option wins over
its variable, a variable wins over the profile):
  --quick               same as --profile quick
  --profile NAME        default | quick | article                     [BENCH_PROFILE]
                          default  -t2 -c100 -d1s, blocks of 3 rounds, 1 s warm-up per
                                   block, until --precision 5 or --max-time 6m
                          quick    -t2 -c100 -d1s, 1 block of 1 round, 1 s warm-up:
                                   a smoke test (< 1 min), no interval claims
                          article  -t100 -c5000 -d30s, 1 block of 1 round, 5 s warm-up
  --threads N           wrk -t                                        [BENCH_THREADS]
  --connections LIST    wrk -c; a list (e.g. 10,100,1000) measures every cell at each
                        level, in that order (file names gain .c<N>)  [BENCH_CONNECTIONS]
  --duration S          seconds per measurement (wrk -d)              [BENCH_DURATION]
  --repeats N           rounds in all (measurements per setup, GOMAXPROCS and level),
                        1-9999, in blocks of --rounds-per-block; no stopping rule
                                                                      [BENCH_REPEATS]
  --rounds-per-block N  rounds per server start (default 3; quick, article: 1)
                                                                      [BENCH_ROUNDS_PER_BLOCK]
  --blocks N            blocks per GOMAXPROCS (server starts); fixes the design: no
                        stopping rule; not with --repeats             [BENCH_BLOCKS]
  --precision PCT       stopping rule's target: every overhead ratio's 95% interval
                        within +/-PCT% (default 5)                    [BENCH_PRECISION]
  --max-time DURATION   stopping rule's time limit, e.g. 6m, 90s, 1h (default profile:
                        6m); no block starts that would end after it  [BENCH_MAX_TIME]
  --warmup S            warm-up seconds per setup, block and level, 0 = none
                                                                      [BENCH_WARMUP]
  --timeout S           wrk --timeout                                 [BENCH_TIMEOUT]
  --gomaxprocs LIST     e.g. 1,2 (each 1-9999); default: 1 and $(nproc)
                                                                      [BENCH_GOMAXPROCS]
  --setups LIST         any of go-http,nginx-http,nginx-fcgi-tcp,nginx-fcgi-unix (the
                        default four), nginx-http-unix (nginx proxy to Go net/http on a
                        Unix socket), go-fasthttp (a standalone fasthttp server, built
                        from src/gofasthttp), nginx-static (nginx answering by itself),
                        node-http (Node.js http module, src/nodehello: one process at
                        GOMAXPROCS=1, a cluster of N workers at GOMAXPROCS=N);
                        or all                                        [BENCH_SETUPS]
  --load-generator NAME wrk (default) or ab: ApacheBench, `ab -k -c C -t S -n <S x
                        500000>` per measurement, kept as <...>.ab.txt; one thread, so
                        --threads is not used                         [BENCH_LOAD_GENERATOR]
  --port NAME=PORT      repeatable; NAME: a setup, or go-fcgi-tcp (Go's FastCGI port)
                        defaults: go-http 8080, nginx-http 8081, nginx-fcgi-tcp 8082,
                        nginx-fcgi-unix 8083, nginx-http-unix 8084, go-fasthttp 8085,
                        nginx-static 8086, node-http 8087, go-fcgi-tcp 9001
                                                                      [BENCH_PORTS=a=1,b=2]
  --pin-client CPUS     run wrk on these CPUs only (taskset -c list, e.g. 0 or 0-1)
                                                                      [BENCH_PIN_CLIENT]
  --pin-server CPUS     run the Go servers and nginx on these CPUs only (e.g. 1)
                                                                      [BENCH_PIN_SERVER]
  --no-upstream-keepalive
                        nginx opens a new connection to Go per request (no keepalive in
                        the upstreams, fastcgi_keep_conn off)  [BENCH_UPSTREAM_KEEPALIVE=0]
  --handler-delay DUR   the Go handlers sleep DUR per request, e.g. 1ms, 500us (default 0)
                                                                      [BENCH_HANDLER_DELAY]
  --body-bytes N        response body size (default 12, "Hello World\n"; repeated to N
                        bytes); the header check then expects Content-Length: N
                                                                      [BENCH_BODY_BYTES]
  --out DIR             where run directories go; default: raw/ in the repository
                                                                      [BENCH_OUT]
  --seed N              seed of the shuffled order (default random; recorded)
                                                                      [BENCH_SEED]
  --server-host [USER@]HOST
                        run the servers on HOST, over ssh (one multiplexed connection);
                        wrk runs here (or on --client-hosts)         [BENCH_SERVER_HOST]
  --server-address ADDR the target's address the servers listen on and wrk connects to
                        (default: the address ssh reached HOST at; never 0.0.0.0)
                                                                      [BENCH_SERVER_ADDRESS]
  --client-hosts LIST   run wrk on each of these at once ([USER@]HOST, or local for this
                        machine), each keeping its own raw file; latency merged exactly
                        from their histograms                        [BENCH_CLIENT_HOSTS]
  --ssh-config FILE     ssh -F FILE for every ssh connection           [BENCH_SSH_CONFIG]
  --tune                as root: apply the article's sysctl values that exist on this
                        kernel, printing each change (limits are only ever raised).
                        Without it nothing system-wide is changed.
  -h, --help            show this help

Preflight: missing nginx, wrk (or ab: apache2-utils, with --load-generator ab), curl, go,
python3, node (nodejs, with node-http) or taskset (with pinning) are installed with
apt-get when run as root, each only when the run needs it (otherwise the command is
printed); the Go server is built
(and the fasthttp one when chosen: its module comes from the Go module proxy); wrkreport
is installed with pip if missing; ulimit -n is raised as far as allowed; every port must
be free; pinned CPUs must be usable here.

Exit status:
  0    run complete (a setup that failed its check is recorded in manifest.json and
       skipped; the others are measured)
  1    run failed (manifest.json says why)
  2    usage or preflight error: bad option, missing tool without root, busy port,
       ulimit -n too low for --connections, a pinned CPU not available; nothing was
       started
  130  interrupted by SIGINT (Ctrl-C), 143 by SIGTERM: servers stopped, manifest marked
       interrupted, completed files kept
EOF
}

# --- State (set once a step has happened; cleanup reads it) ----------------------------
WORK=""           # private work dir (mktemp): nginx prefix, Unix socket, Go binary
RUN_DIR=""        # OUT/<run-id>
GO_BIN=""
FASTHTTP_BIN=""
NGINX=""
SOCKET=""         # gohello's FastCGI Unix socket
HTTP_SOCKET=""    # gohello's net/http Unix socket
WORKER_GROUP=""
NOFILE=""
COMMAND_LINE=""
GO_PID=""
FASTHTTP_PID=""
NODE_PID=""       # nodehello: the one process, or the cluster's primary
NODE_WORKERS=()   # the cluster's workers (from pass-ready), stopped by the primary; killed if they outlive it
NODE=""           # the node binary
NGINX_PID=""
NGINX_WORKERS=()
WRK_PID=""
BLOCK=0           # the block being run (1-based; per GOMAXPROCS value)
CURRENT_FILES=()  # a measurement's wrk and CPU files; removed if the run stops before it is recorded
STAGE=""          # what the run is doing, for the manifest's reason
FAIL_REASON=""
FINISHED=0
PROGRESS_OPEN=0   # a progress line awaits its end
MEASURED=0
SKIPPED=()
USABLE=()
SETUPS=()
LEVELS=()         # wrk -c values, in order
CLIENT_PIN=()     # taskset -c LIST, or nothing
SERVER_PIN=()
GOMAXPROCS_LIST=()
ORDERS=()         # this block's shuffled setup orders, one line per (connection level, round)
ANSWER=()         # the lines of the helper's last answer (ask)
HELPER_PROC=""    # PID of the long-lived helper (coproc HELPER)
CELL=()           # one --cell SETUP READY HEADERS ERROR of `pass-ready`
CELLS_DEADLINE=0  # when the setups of this pass must have answered (SECONDS)
SSH_HOSTS=()      # hosts with an open ssh master connection (ssh_open); closed in cleanup
SSH=()            # the ssh command for one host through its master (ssh_cmd)
TARGET=""         # --server-host: the [user@]host running the servers; empty: they run here
TARGET_DIR=""     # the private work dir on the target (mktemp -d there; target.sh finish removes it)
TARGET_UID=""     # the uid ssh logs in as on the target
TARGET_NOFILE=""  # ulimit -n the remote shell starting each server raises to
TARGET_ARCH=()    # GOARCH=... (GOARM=...) for go build
TARGET_SSH=()     # the address and port ssh reached the target at ($SSH_CONNECTION there)
CLIENTS_STATE=""  # --client-hosts: the helper's state file of the clients (clients_preflight); removed there in cleanup
declare -A PLAN=()
declare -A DOWN=() # server name -> why it did not start in this pass

log() {
  if ((PROGRESS_OPEN)); then
    printf '\n' >&2
    PROGRESS_OPEN=0
  fi
  printf '[run_bench] %s\n' "$*" >&2
}

# die STATUS MESSAGE: log, remember why for the manifest, exit (cleanup runs on EXIT).
die() {
  local status="$1"
  shift
  FAIL_REASON="$*"
  log "error: $*"
  exit "${status}"
}

on_error() {
  [[ -n "${FAIL_REASON}" ]] || FAIL_REASON="line $2: '$3' failed with exit status $1"
}

# helper SUBCOMMAND ARGS...: the driver's helper, wrkreport.bench (contract: docs/driver.md).
helper() {
  PYTHONPATH="${ROOT}/src${PYTHONPATH:+:${PYTHONPATH}}" python3 -m wrkreport.bench "$@"
}

# helper_bg ARGS...: the helper in the background as one process, so $! is Python's own PID.
helper_bg() {
  PYTHONPATH="${ROOT}/src${PYTHONPATH:+:${PYTHONPATH}}" exec python3 -m wrkreport.bench "$@"
}

# start_helper: the long-lived helper for the run's bookkeeping (docs/driver.md, `serve`).
start_helper() {
  local target=()
  [[ -z "${TARGET}" ]] || target=(--ssh-control "${WORK}/ssh/%C" --target-dir "${TARGET_DIR}")
  coproc HELPER { helper_bg serve --run "${RUN_DIR}" "${target[@]}"; }
  HELPER_PROC="${HELPER_PID}"
}

# ask SUBCOMMAND ARGS...: send one command to the helper (arguments NUL-ended, then an
# RS argument) and read its answer into ANSWER, up to its `@@done STATUS` line; return STATUS.
ask() {
  local line
  ANSWER=()
  if [[ -z "${HELPER_PROC}" ]] || ! is_running "${HELPER_PROC}"; then
    die 1 "the helper (wrkreport.bench serve) is not running"
  fi
  printf '%s\0' "$@" $'\x1e' >&"${HELPER[1]}"
  while :; do
    if ! IFS= read -r line <&"${HELPER[0]}"; then
      is_running "${HELPER_PROC}" || die 1 "the helper (wrkreport.bench serve) exited during '$1'"
      continue # a signal interrupted read; its trap has run
    fi
    if [[ "${line}" == "@@done "* ]]; then
      [[ "${line}" != "@@done 4" || -z "${TARGET}" ]] || target_lost "running '$1' (the helper's connection ended)"
      return "${line#@@done }"
    fi
    ANSWER+=("${line}")
  done
}

# stop_helper: close the helper's input and wait for it (it has written everything).
stop_helper() {
  [[ -n "${HELPER_PROC}" ]] || return 0
  local fd="${HELPER[1]:-}" i
  [[ -z "${fd}" ]] || exec {fd}>&-
  for ((i = 0; i < 50; i++)); do
    is_running "${HELPER_PROC}" || break
    sleep 0.1
  done
  is_running "${HELPER_PROC}" && kill -TERM "${HELPER_PROC}" 2>/dev/null
  wait "${HELPER_PROC}" 2>/dev/null || true
  HELPER_PROC=""
}

contains() {
  local needle="$1" item
  shift
  for item in "$@"; do
    [[ "${item}" == "${needle}" ]] && return 0
  done
  return 1
}

is_root() { ((EUID == 0)); }

# servers_as_root: true when the servers run as root (here, or where ssh logs in on the target).
servers_as_root() {
  if [[ -n "${TARGET}" ]]; then [[ "${TARGET_UID}" == 0 ]]; else is_root; fi
}

# is_running PID: true while the process exists and is not a zombie.
is_running() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [[ "${stat:0:1}" != "Z" ]]
}

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
  read -ra SETUPS <<<"${PLAN[setups]}"
  read -ra LEVELS <<<"${PLAN[connections]}"
  read -ra GOMAXPROCS_LIST <<<"${PLAN[gomaxprocs]}"
  [[ -z "${PLAN[pin_client]:-}" ]] || CLIENT_PIN=(taskset -c "${PLAN[pin_client]}")
  [[ -z "${PLAN[pin_server]:-}" ]] || SERVER_PIN=(taskset -c "${PLAN[pin_server]}")
}

# --- ssh: one multiplexed connection per remote host -------------------------------------

# ssh_cmd HOST: set SSH to the ssh command reaching HOST through its master connection
# (ControlPath in the private work dir; --ssh-config as -F; never a password prompt).
ssh_cmd() {
  SSH=(ssh -o ControlPath="${WORK}/ssh/%C" -o BatchMode=yes -o ConnectTimeout=10
    -o ServerAliveInterval=5 -o ServerAliveCountMax=3)
  [[ -z "${PLAN[ssh_config]:-}" ]] || SSH+=(-F "${PLAN[ssh_config]}")
  SSH+=("$@")
}

# ssh_open HOST: start HOST's master connection (in the background, until ssh_close_all);
# a failure is a preflight error: exit 2, nothing started on either machine.
ssh_open() {
  local host="$1" output
  [[ -d "${WORK}/ssh" ]] || mkdir -m 0700 "${WORK}/ssh"
  ssh_cmd -o ControlMaster=yes -o ControlPersist=no -f -N -- "${host}"
  # Not $(...): the master keeps its output open after -f, and the substitution would wait for it.
  if ! "${SSH[@]}" </dev/null >"${WORK}/ssh/open.log" 2>&1; then
    output="$(tr -s '\r\n' '  ' <"${WORK}/ssh/open.log")"
    die 2 "ssh to ${host} failed: ${output% }; nothing was started (check: ssh${PLAN[ssh_config]:+ -F ${PLAN[ssh_config]}} ${host} true)"
  fi
  SSH_HOSTS+=("${host}")
  quiet_login "${host}"
}

# quiet_login HOST: refuse (exit 2) a HOST whose login shell prints to stdout before a
# command's output (an `echo` in its ~/.bashrc): that text would mix into every answer read there.
quiet_login() {
  local host="$1" said
  said="$(on_host "${host}" "echo ${QUIET_MARK}" </dev/null 2>/dev/null)" || die 2 "ssh to ${host} failed right after connecting; nothing was started"
  [[ "${said}" != "${QUIET_MARK}" ]] || return 0
  said="${said%"${QUIET_MARK}"}"
  said="$(printf '%s' "${said}" | tr -s '\r\n\t' '   ' | cut -c1-120)"
  die 2 "ssh ${host} prints '${said% }' before every command's output (its login shell's rc files, e.g. ~/.bashrc there); wrkreport reads what commands print there, so make non-interactive logins quiet (print only when [[ \$- == *i* ]]); nothing was started"
}

# on_host HOST COMMAND: run COMMAND (one string, read by HOST's shell) over HOST's master.
on_host() {
  ssh_cmd -- "$1"
  "${SSH[@]}" "$2"
}

# open_ssh: a master connection to the target and to each remote client, before anything starts.
open_ssh() {
  local host
  ((PLAN[remote])) || return 0
  command -v ssh >/dev/null 2>&1 || die 2 "ssh is not installed (apt-get install openssh-client); --server-host and --client-hosts need it"
  [[ -z "${PLAN[server_host]:-}" ]] || ssh_open "${PLAN[server_host]}"
  for host in ${PLAN[client_hosts]:-}; do
    [[ "${host}" == local ]] || contains "${host}" "${SSH_HOSTS[@]}" || ssh_open "${host}"
  done
}

# --- The target (--server-host): the servers started, checked and stopped over ssh ---------
# Through target.sh in a private work dir made there (TARGET_DIR), over the one master
# connection; every server by its PID (docs/driver.md, "Two machines").

# shq WORD...: the words single-quoted for the target's sh.
shq() {
  local word out=""
  for word in "$@"; do
    out+=" '${word//\'/\'\\\'\'}'"
  done
  printf '%s\n' "${out# }"
}

# on_target COMMAND ARGS...: target.sh COMMAND on the target; exit status 255: ssh failed.
on_target() {
  on_host "${TARGET}" "sh $(shq "${TARGET_DIR}/target.sh" "$@")"
}

# target_lost WHAT: the ssh connection to the target is gone: the run fails, saying so.
target_lost() {
  die 1 "lost the ssh connection to ${TARGET} while ${1}"
}

# open_target OPTIONS...: with --server-host: where ssh reached it (the servers' address unless
# --server-address says otherwise: the plan is made again with it, so the URLs follow), what it
# is (remote.py's facts), its work dir with target.sh, its tools and its ulimit -n.
open_target() {
  local text key value
  [[ -n "${PLAN[server_host]:-}" ]] || return 0
  TARGET="${PLAN[server_host]}"
  # shellcheck disable=SC2016 # expanded on the target
  text="$(on_host "${TARGET}" 'printf "%s\n" "$SSH_CONNECTION"')" || target_lost "asking for its address"
  read -ra TARGET_SSH <<<"${text}"
  ((${#TARGET_SSH[@]} == 4)) || die 2 "--server-host ${TARGET}: cannot read \$SSH_CONNECTION there ('${text}'); give --server-address"
  TARGET_SSH=("${TARGET_SSH[2]%%\%*}" "${TARGET_SSH[3]}")
  if [[ -z "${PLAN[server_address]:-}" ]]; then
    read_plan "$@" --server-address "${TARGET_SSH[0]}"
  fi
  on_host "${TARGET}" "$(helper facts-script)" >"${WORK}/target.facts" </dev/null || target_lost "reading what it is"
  text="$(helper target-facts --plan "${WORK}/plan.json" --facts "${WORK}/target.facts")" || exit
  declare -A facts=()
  while read -r key value; do
    facts["${key}"]="${value}"
  done <<<"${text}"
  TARGET_UID="${facts[uid]}"
  TARGET_ARCH=("GOARCH=${facts[goarch]}")
  [[ -z "${facts[goenv]:-}" ]] || TARGET_ARCH+=("${facts[goenv]}")
  [[ -z "${facts[missing]:-}" ]] || target_install "${facts[missing]}"
  # shellcheck disable=SC2016 # expanded on the target
  TARGET_DIR="$(on_host "${TARGET}" 'mktemp -d "${TMPDIR:-/tmp}/wrkreport.XXXXXX"')" || die 2 "cannot make a work dir on ${TARGET} (mktemp -d)"
  on_host "${TARGET}" "cat >$(shq "${TARGET_DIR}/target.sh")" <"${TARGET_SCRIPT}" || target_lost "copying target.sh"
  on_host "${TARGET}" "command -v setsid >/dev/null" || die 2 "${TARGET} has no setsid (util-linux): it starts the servers there"
  NGINX="${facts[path.nginx]:-}"
  NODE="${facts[path.node]:-}"
  log "target ${TARGET}: servers listen on ${PLAN[server_address]}; work dir ${TARGET_DIR}"
}

# target_install TOOLS: the target lacks tools; as root there apt-get installs them, else exit 2 with the command.
target_install() {
  local tools=() tool packages=() text
  read -ra tools <<<"$1"
  for tool in "${tools[@]}"; do
    case "${tool}" in nginx) packages+=(nginx-light) ;; *) packages+=("$(apt_package "${tool}")") ;; esac
  done
  if [[ "${TARGET_UID}" != 0 ]] || ! on_host "${TARGET}" "command -v apt-get >/dev/null"; then
    die 2 "missing on ${TARGET}: ${tools[*]}. Install there with: ssh ${TARGET} sudo apt-get install -y ${packages[*]} (on releases without nginx-light: nginx); nothing was started"
  fi
  log "missing on ${TARGET}: ${tools[*]}; installing there with apt-get install ${packages[*]}"
  on_host "${TARGET}" "DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(shq "${packages[@]}")" >&2 </dev/null ||
    die 2 "apt-get install ${packages[*]} failed on ${TARGET}"
  on_host "${TARGET}" "$(helper facts-script)" >"${WORK}/target.facts" </dev/null || target_lost "reading what it is"
  text="$(helper target-facts --plan "${WORK}/plan.json" --facts "${WORK}/target.facts")" || exit
  [[ "${text}" != *$'\nmissing '* ]] || die 2 "still missing on ${TARGET} after apt-get: ${text##*missing }"
}

# target_preflight: nginx there has the modules; its ulimit -n fits --connections; its work dir.
target_preflight() {
  local problems need="${PLAN[needed_fds]}"
  if [[ -n "${PLAN[nginx_setups]}" ]]; then
    on_host "${TARGET}" "$(shq "${NGINX}") -V 2>&1" >"${WORK}/target.nginx-V" </dev/null || die 2 "${NGINX} -V failed on ${TARGET}"
    problems="$(helper check-nginx --plan "${WORK}/plan.json" --nginx-v-file "${WORK}/target.nginx-V")" || die 2 "${TARGET}: ${problems:-cannot check ${NGINX}}"
  fi
  TARGET_NOFILE="$(on_target nofile "${NOFILE_CEILING}")" || target_lost "raising ulimit -n"
  if [[ "${TARGET_NOFILE}" != unlimited ]] && ((TARGET_NOFILE < need)); then
    die 2 "--connections ${PLAN[connections_max]} needs about ${need} open files, but ulimit -n on ${TARGET} is ${TARGET_NOFILE} and cannot go higher there; lower --connections or raise the hard limit there"
  fi
  log "ulimit -n ${TARGET_NOFILE} on ${TARGET}"
  WORKER_GROUP="$(on_target prepare "${WORKER_USER_AS_ROOT}")" || die 2 "cannot prepare ${TARGET_DIR} on ${TARGET}"
  SOCKET="${TARGET_DIR}/go.sock"
  HTTP_SOCKET="${TARGET_DIR}/gohttp.sock"
  ((${#HTTP_SOCKET} <= SUN_PATH_MAX)) || die 2 "Unix socket path ${HTTP_SOCKET} on ${TARGET} is longer than ${SUN_PATH_MAX} bytes"
}

# target_copy FILE: copy a local file (a server binary) into the target's work dir, executable.
target_copy() {
  local dest
  dest="$(shq "${TARGET_DIR}/${1##*/}")"
  on_host "${TARGET}" "cat >${dest} && chmod 0755 ${dest}" <"$1" || target_lost "copying ${1##*/}"
}

# target_ports: every needed port free on the target (its /proc/net/tcp, read by the helper).
target_ports() {
  local busy
  on_target tcp >"${WORK}/target.tcp" </dev/null || target_lost "reading its ports"
  if ! busy="$(helper target-ports --plan "${WORK}/plan.json" --tcp "${WORK}/target.tcp")"; then
    die 2 "${busy//$'\n'/; }; nothing was started (choose other ports with --port NAME=PORT)"
  fi
}

# target_record: the target and the RTT to it in the manifest (measured now, before the run).
target_record() {
  local args=(target-record --run "${RUN_DIR}" --facts "${WORK}/target.facts" --address "${PLAN[server_address]}"
    --ulimit-n "${TARGET_NOFILE}" --ssh-address "${TARGET_SSH[0]}" --ssh-port "${TARGET_SSH[1]}") line
  [[ -z "${PLAN[nginx_setups]}" ]] || args+=(--nginx-v-file "${WORK}/target.nginx-V")
  while IFS= read -r line; do
    log "${line}"
  done < <(helper "${args[@]}")
}

# render_nginx_target: nginx.conf with the target's paths and address, copied there, checked there with nginx -t.
render_nginx_target() {
  local rlimit="${NGINX_RLIMIT_MAX}" params output
  if [[ "${TARGET_NOFILE}" != unlimited ]] && ((TARGET_NOFILE < rlimit)); then
    rlimit="${TARGET_NOFILE}"
  fi
  params="$(helper target-nginx --nginx-v-file "${WORK}/target.nginx-V")" || die 2 "${TARGET}: ${params}"
  on_host "${TARGET}" "test -f $(shq "${params}")" || die 2 "${TARGET}: no ${params} (nginx's stock FastCGI parameters)"
  local args=(render-nginx --run "${RUN_DIR}" --template "${TEMPLATE}" --prefix "${TARGET_DIR}/nginx"
    --socket "${SOCKET}" --http-socket "${HTTP_SOCKET}" --rlimit "${rlimit}" --listen-address "${PLAN[server_address]}"
    --fastcgi-params "${params}" --out "${RUN_DIR}/nginx.conf")
  [[ "${TARGET_UID}" != 0 ]] || args+=(--user "${WORKER_USER_AS_ROOT}" --group "${WORKER_GROUP}")
  helper "${args[@]}"
  on_host "${TARGET}" "cat >$(shq "${TARGET_DIR}/nginx.conf")" <"${RUN_DIR}/nginx.conf" || target_lost "copying nginx.conf"
  output="$(on_host "${TARGET}" "$(shq "${NGINX}" -t -q -c "${TARGET_DIR}/nginx.conf" -p "${TARGET_DIR}/nginx/" -e "${TARGET_DIR}/nginx-test.log") 2>&1" </dev/null)" ||
    die 1 "nginx on ${TARGET} rejected ${RUN_DIR}/nginx.conf: ${output}"
}

# target_start VAR NAME LOG ENV/ARGV...: start a server on the target with target.sh (setsid,
# ulimit -n raised in that shell), its output in the target's logs/LOG; VAR gets its PID.
target_start() {
  local var="$1" name="$2" log_name="$3" pid
  shift 3
  pid="$(on_target start "${name}" "${TARGET_DIR}/logs/${log_name}" "${TARGET_NOFILE}" "$@" </dev/null)" || target_lost "starting ${name}"
  printf -v "${var}" '%s' "${pid}"
}

# target_ready PID LOG: wait on the target for the server's "ready" line; fetch its log either way.
target_ready() {
  local rc=0
  on_target ready "$1" "${TARGET_DIR}/logs/${2##*/}" "${READY_TIMEOUT_S}" </dev/null || rc=$?
  ((rc != 255)) || target_lost "waiting for a server to start"
  fetch_log "$2"
  return "${rc}"
}

# fetch_log LOG: the target's logs/LOG (its first LOG_FETCH_CAP bytes) into the run's logs/.
fetch_log() {
  on_target log "${LOG_FETCH_CAP}" "${TARGET_DIR}/logs/${1##*/}" >"${RUN_DIR}/logs/${1##*/}" </dev/null || true
}

# fetch_logs N: every server log of this block from the target (at the block's end).
fetch_logs() {
  local name
  for name in go fasthttp node; do
    [[ -z "${PLAN[${name}_setups]}" ]] || fetch_log "$(server_log "${name}" "$1")"
  done
  [[ -z "${PLAN[nginx_setups]}" ]] || fetch_log "nginx-error.gomaxprocs-$1.log"
}

# server_alive PID...: true while these servers of this run are running, here or on the target.
server_alive() {
  local rc=0 pid
  if [[ -z "${TARGET}" ]]; then
    for pid in "$@"; do
      is_running "${pid}" || return 1
    done
    return 0
  fi
  if [[ -n "${HELPER_PROC}" ]]; then # through the helper's ssh session: a new one costs a round trip and a login
    ask target-running "$@" || rc=$?
    ((rc == 0 || rc == 3)) || die 1 "could not check the servers on ${TARGET} (helper exit status ${rc})"
    return "$((rc != 0))"
  fi
  on_target running "$@" </dev/null || rc=$?
  ((rc != 255)) || target_lost "checking its servers"
  return "${rc}"
}

# target_stop NAME...: stop servers on the target by their PIDs (target.sh stop: SIGTERM, SIGKILL, children).
target_stop() {
  local line
  while IFS= read -r line; do
    log "${line} (on ${TARGET})"
  done < <(on_target stop "$@" </dev/null || printf '%s\n' "could not reach ${TARGET} to stop $*")
}

# target_cleanup: stop whatever this run started on the target and remove its work dir;
# when the link is down, keep trying for TARGET_CLEANUP_S (each try a new connection once the
# master is gone), then say what is left there and how to remove it.
target_cleanup() {
  local deadline=$((SECONDS + TARGET_CLEANUP_S)) rc
  [[ -n "${TARGET_DIR}" ]] || return 0
  ssh_cmd -- "${TARGET}"
  while :; do
    rc=0
    timeout 20 "${SSH[@]}" "sh $(shq "${TARGET_DIR}/target.sh") finish" </dev/null >&2 || rc=$?
    ((rc != 0)) || break
    if ((SECONDS >= deadline)); then
      log "warning: could not reach ${TARGET} for ${TARGET_CLEANUP_S}s: the servers this run started there may still run; stop them and remove the work dir with: ssh ${TARGET} sh ${TARGET_DIR}/target.sh finish"
      break
    fi
    log "cannot reach ${TARGET} to stop its servers (ssh exit status ${rc}); trying again"
    sleep 2
  done
  TARGET_DIR=""
}

# --- Clients: wrk on each of --client-hosts at once ----------------------------------------

# uses_local_client: true when wrk runs on this machine (no --client-hosts, or `local` among them).
uses_local_client() {
  local hosts=()
  read -ra hosts <<<"${PLAN[client_hosts]:-local}"
  contains local "${hosts[@]}"
}

# clients_preflight: with --client-hosts, the helper checks every client (wrk there, installed
# with apt-get when ssh logs in as root; else exit 2 with the command), makes a private work
# dir on each remote one (histogram.lua copied into it), times each one's RTT to the target
# and keeps all that in CLIENTS_STATE for warm_up, measure and cleanup (docs/driver.md).
clients_preflight() {
  local address="" line
  [[ -n "${PLAN[client_hosts]:-}" ]] || return 0
  [[ -z "${PLAN[server_host]:-}" ]] || address="${PLAN[server_address]:-${PLAN[server_host]#*@}}"
  CLIENTS_STATE="${WORK}/clients.json"
  helper clients-preflight --plan "${WORK}/plan.json" --control-path "${WORK}/ssh/%C" --hist-script "${HIST_SCRIPT}" \
    --target "${address}" --save "${CLIENTS_STATE}" >"${WORK}/clients.txt" || exit
  while IFS= read -r line; do
    log "${line}"
  done <"${WORK}/clients.txt"
}

# record_clients: the clients' machines and RTT into the manifest (client_hosts, network.rtt).
record_clients() {
  [[ -z "${CLIENTS_STATE}" ]] || helper clients-record --run "${RUN_DIR}" --state "${CLIENTS_STATE}"
}

# client_files STEM: CURRENT_FILES gains the .client-<i> files of a measurement on several clients.
client_files() {
  local hosts=() i
  read -ra hosts <<<"${PLAN[client_hosts]:-}"
  ((${#hosts[@]} > 1)) || return 0
  for ((i = 1; i <= ${#hosts[@]}; i++)); do
    CURRENT_FILES+=("${RUN_DIR}/$1.client-${i}${PLAN[raw_suffix]}" "${RUN_DIR}/$1.client-${i}.hist.json")
  done
}

# warm_up_clients SETUP: the warm-up wrk (WRK_ARGS) on every client at once, through the helper.
warm_up_clients() {
  local rc=0 line
  ask warm-up --clients "${CLIENTS_STATE}" --stderr "${WORK}/wrk.stderr" -- "${WRK_ARGS[@]}" || rc=$?
  ((rc != 130 && rc != 143)) || exit "${rc}"
  ((rc == 0)) || die 1 "could not run the warm-up of $1 on the clients (exit status ${rc})"
  for line in "${ANSWER[@]}"; do
    log "warm-up of $1: ${line}"
  done
}

# clients_down: stop any wrk left on the remote clients and remove their work dirs (cleanup).
clients_down() {
  local problems
  [[ -n "${CLIENTS_STATE}" && -f "${CLIENTS_STATE}" ]] || return 0
  problems="$(helper clients-down --state "${CLIENTS_STATE}")"
  [[ -z "${problems}" ]] || log "warning: ${problems//$'\n'/; }"
}

# ssh_close_all: end every master connection (each ends its sessions).
ssh_close_all() {
  local host
  for host in "${SSH_HOSTS[@]}"; do
    ssh_cmd -O exit -- "${host}"
    "${SSH[@]}" 2>/dev/null || true
  done
  SSH_HOSTS=()
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
  if ((${#missing[@]} > 0)); then
    install_tools "${missing[@]}"
    NGINX="$(find_nginx)" || true
    NODE="$(find_node)" || true
  fi
  if [[ -n "${PLAN[nginx_setups]}" ]]; then
    problems="$(helper check-nginx --plan "${WORK}/plan.json" --nginx "${NGINX}")" || die 2 "${problems:-cannot check ${NGINX}}"
  fi
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
  if ((${#HTTP_SOCKET} > SUN_PATH_MAX)); then
    die 2 "Unix socket path ${HTTP_SOCKET} is longer than ${SUN_PATH_MAX} bytes; set TMPDIR to a shorter directory"
  fi
  mkdir -p "${WORK}/nginx/temp"
  if is_root; then
    WORKER_GROUP="$(id -gn "${WORKER_USER_AS_ROOT}")" || die 2 "no user ${WORKER_USER_AS_ROOT} to run nginx workers as"
    chgrp "${WORKER_GROUP}" "${WORK}" "${WORK}/nginx" "${WORK}/nginx/temp"
    chmod 0710 "${WORK}" "${WORK}/nginx" "${WORK}/nginx/temp"
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

# --- The run -----------------------------------------------------------------------------

start_run() {
  local nginx="${NGINX}"
  [[ -z "${TARGET}" ]] || nginx="" # the target's nginx -V: target_record
  local args=(init --plan "${WORK}/plan.json" --command-line "${COMMAND_LINE}" --nginx "${nginx}")
  [[ "${NOFILE}" == unlimited ]] || args+=(--ulimit-n "${NOFILE}")
  RUN_DIR="$(helper "${args[@]}")"
  if ((PLAN[adaptive])); then
    log "run ${RUN_DIR##*/}: blocks until every ratio is within +/-${PLAN[precision_pct]}%: at least ${PLAN[measurements]} measurements (about ${PLAN[estimate]}), at most ${PLAN[max_time]:-no limit}; writing ${RUN_DIR}"
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
}

render_nginx() {
  local rlimit="${NGINX_RLIMIT_MAX}" output
  if [[ "${NOFILE}" != unlimited ]] && ((NOFILE < rlimit)); then
    rlimit="${NOFILE}"
  fi
  local args=(render-nginx --run "${RUN_DIR}" --template "${TEMPLATE}" --prefix "${WORK}/nginx"
    --socket "${SOCKET}" --http-socket "${HTTP_SOCKET}" --rlimit "${rlimit}" --out "${RUN_DIR}/nginx.conf")
  if is_root; then
    args+=(--user "${WORKER_USER_AS_ROOT}" --group "${WORKER_GROUP}")
  fi
  helper "${args[@]}"
  output="$("${NGINX}" -t -q -c "${RUN_DIR}/nginx.conf" -p "${WORK}/nginx/" -e "${WORK}/nginx-test.log" 2>&1)" ||
    die 1 "nginx rejected ${RUN_DIR}/nginx.conf: ${output}"
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

# start_nginx N: start nginx in the foreground of a background job, so $! is the master.
start_nginx() {
  local n="$1" log_file="${RUN_DIR}/logs/nginx-error.gomaxprocs-$1.log"
  if [[ -n "${TARGET}" ]]; then
    log_file="${TARGET_DIR}/logs/${log_file##*/}"
    target_start NGINX_PID nginx "${log_file##*/}" "${NGINX}" -c "${TARGET_DIR}/nginx.conf" -p "${TARGET_DIR}/nginx/" \
      -e "${log_file}" -g "error_log \"${log_file}\" crit;"
    return 0
  fi
  local args=(-c "${RUN_DIR}/nginx.conf" -p "${WORK}/nginx/" -e "${log_file}" -g "error_log \"${log_file}\" crit;")
  "${SERVER_PIN[@]}" "${NGINX}" "${args[@]}" >>"${log_file}" 2>&1 &
  NGINX_PID=$!
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
  [[ -z "${PLAN[nginx_setups]}" ]] || names+=(nginx)
  [[ -z "${PLAN[fasthttp_setups]}" ]] || names+=("the fasthttp server")
  if [[ -n "${PLAN[node_setups]}" ]]; then
    if ((n == 1)); then names+=("the Node server (one process)"); else names+=("the Node server (cluster of ${n} workers)"); fi
  fi
  log "block ${BLOCK} GOMAXPROCS=${n}: starting $(join_words "${names[@]}")"
  if [[ -n "${PLAN[go_setups]}" ]] && ! start_go "${n}"; then
    DOWN[go]="$(not_started "the Go server" "$(server_log go "${n}")")"
    log "GOMAXPROCS=${n}: ${DOWN[go]}; no setup that needs it is measured in this block"
  fi
  [[ -z "${PLAN[nginx_setups]}" ]] || start_nginx "${n}"
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
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 "$1")" || true
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
    fasthttp) printf '%s\n' "${FASTHTTP_PID}" ;;
    node) printf '%s\n' "${NODE_PID}" ;;
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

# cell_args N SETUP: the pass-ready --cell of SETUP: wait for its answer, capture `curl -sI`.
cell_args() {
  local n="$1" setup="$2" url file pid error rc=0
  url="${PLAN[url.${setup}]}"
  file="${RUN_DIR}/${setup}.gomaxprocs-${n}.headers.txt"
  ((BLOCK == 1)) || file="${WORK}/${setup}.headers.txt" # later blocks: checked, not kept
  pid="$(server_pid "${PLAN[server.${setup}]}")"
  error="$(down_reason "${setup}")"
  if [[ -n "${error}" ]]; then
    CELL=(--cell "${setup}" 0 "" "${error}")
  elif wait_answer "${url}" "${pid}" "${CELLS_DEADLINE}"; then
    curl -sI --max-time "${CURL_MAX_TIME_S}" "${url}" >"${file}" || rc=$?
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
  local n="$1" setup output verdict text
  local args=(pass-ready --gomaxprocs "${n}")
  [[ -z "${GO_PID}" ]] || args+=(--go-pid "${GO_PID}" --go-log "${RUN_DIR}/$(server_log go "${n}")")
  [[ -z "${NGINX_PID}" ]] || args+=(--nginx-pid "${NGINX_PID}")
  [[ -z "${FASTHTTP_PID}" ]] || args+=(--fasthttp-pid "${FASTHTTP_PID}")
  [[ -z "${NODE_PID}" ]] || args+=(--node-pid "${NODE_PID}")
  CELLS_DEADLINE=$((SECONDS + READY_TIMEOUT_S))
  for setup in "${SETUPS[@]}"; do
    cell_args "${n}" "${setup}"
    args+=("${CELL[@]}")
  done
  ask "${args[@]}" || die 1 "could not record block ${BLOCK} GOMAXPROCS=${n} in the manifest"
  USABLE=()
  for output in "${ANSWER[@]}"; do
    read -r verdict setup text <<<"${output}"
    case "${verdict}" in
      nginx_workers) read -ra NGINX_WORKERS <<<"${setup} ${text}" ;;
      node_workers) read -ra NODE_WORKERS <<<"${setup} ${text}" ;;
      measure)
        USABLE+=("${setup}")
        [[ -z "${text}" ]] || log "${setup} GOMAXPROCS=${n}: ${text}"
        ;;
      skip)
        log "${setup} GOMAXPROCS=${n} block ${BLOCK}: ${text}; the run goes on without it"
        SKIPPED+=("${setup} GOMAXPROCS=${n} block ${BLOCK}: ${text}")
        ;;
    esac
  done
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

# wrk_args C SECONDS URL [OPTION...]: the load generator's command (after taskset when the
# client is pinned): wrk with the options given, or ab (keep-alive; -t before -n, since -t
# resets -n; -n large enough that the time limit ends the run; --timeout as -s).
wrk_args() {
  if [[ "${PLAN[load_generator]}" == ab ]]; then
    WRK_ARGS=("${CLIENT_PIN[@]}" ab -k "-c$1" -t "$2" -n "$(($2 * PLAN[ab_requests_per_s]))" -s "${PLAN[wrk_timeout_s]}" "$3")
    return 0
  fi
  WRK_ARGS=("${CLIENT_PIN[@]}" wrk "${@:4}" "-t${PLAN[threads]}" "-c$1" "-d$2s" --timeout "${PLAN[wrk_timeout_s]}s" "$3")
}

# warm_up N C: a run of wrk per usable setup at C connections, output not kept.
warm_up() {
  local n="$1" c="$2" setup label="block ${BLOCK} GOMAXPROCS=$1"
  ((PLAN[sweep])) && label+=" c=${c}"
  ((PLAN[warmup_s] > 0 && ${#USABLE[@]} > 0)) || return 0
  STAGE="the ${label} warm-up"
  log "warm-up ${label}: ${PLAN[warmup_s]}s per setup, not kept"
  for setup in "${USABLE[@]}"; do
    wrk_args "${c}" "${PLAN[warmup_s]}" "${PLAN[url.${setup}]}"
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
  wrk_args "${c}" "${PLAN[duration_s]}" "${PLAN[url.${setup}]}" --latency -s "${HIST_SCRIPT}"
  STAGE="${label} block ${BLOCK} run ${k} (its partial output was discarded)"
  local hist=()
  [[ "${PLAN[load_generator]}" == ab ]] || hist=(--hist-file "${stem}.hist.json") # ab has no histogram
  CURRENT_FILES=("${RUN_DIR}/${stem}${PLAN[raw_suffix]}" "${RUN_DIR}/${stem}.cpu.json" "${RUN_DIR}/${stem}.hist.json")
  local clients=()
  if [[ -n "${CLIENTS_STATE}" ]]; then
    clients=(--clients "${CLIENTS_STATE}")
    client_files "${stem}"
  fi
  PROGRESS_OPEN=1
  ask measure --gomaxprocs "${n}" --connections "${c}" --setup "${setup}" --repeat "${k}" --block "${BLOCK}" --round "$5" \
    --file "${stem}${PLAN[raw_suffix]}" --cpu-file "${stem}.cpu.json" "${hist[@]}" --stderr "${WORK}/wrk.stderr" "${clients[@]}" -- "${WRK_ARGS[@]}" || rc=$?
  ((rc != 130 && rc != 143)) || exit "${rc}"
  ((rc == 0)) || die 1 "could not run or record ${stem} (exit status ${rc})"
  CURRENT_FILES=()
  PROGRESS_OPEN=0
  MEASURED=$((MEASURED + 1))
}

# start_block N FIRST ROUNDS: record block BLOCK of GOMAXPROCS=N (rounds FIRST..) and its
# shuffled orders (ORDERS), start its servers, check every setup answers (USABLE).
start_block() {
  local n="$1"
  STAGE="the start of block ${BLOCK} GOMAXPROCS=${n}"
  ask pass-start --gomaxprocs "${n}" --block "${BLOCK}" --first-round "$2" --rounds "$3" || die 1 "could not record block ${BLOCK} GOMAXPROCS=${n}"
  ORDERS=("${ANSWER[@]}")
  start_servers "${n}"
  check_cells "${n}"
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
stop_rule() {
  local verdict worst reason
  ((PLAN[adaptive])) || return 1
  ask decide || die 1 "could not assess the precision after block ${BLOCK}"
  read -r verdict worst reason <<<"${ANSWER[0]}"
  if [[ "${worst}" == - ]]; then worst="no interval yet"; else worst="worst ratio +/-${worst}%"; fi
  log "after block ${BLOCK} GOMAXPROCS=$1: ${worst} (target +/-${PLAN[precision_pct]}%)"
  [[ "${verdict}" == stop ]] || return 1
  log "stopping: ${reason}"
}

# run_blocks: blocks alternating GOMAXPROCS values, a fixed number or until stop_rule says stop.
run_blocks() {
  local n first rounds
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

# --- Stopping: only the PIDs this script started ------------------------------------------

# stop_process PID NAME: SIGTERM, up to STOP_TIMEOUT_S for it to exit, then SIGKILL; reap it.
stop_process() {
  local pid="$1" name="$2" i
  kill -TERM "${pid}" 2>/dev/null || true
  for ((i = 0; i < STOP_TIMEOUT_S * 10; i++)); do
    is_running "${pid}" || break
    sleep 0.1
  done
  if is_running "${pid}"; then
    log "${name} (pid ${pid}) still running ${STOP_TIMEOUT_S}s after SIGTERM: SIGKILL"
    kill -KILL "${pid}" 2>/dev/null || true
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
  if [[ -n "${TARGET}" ]]; then # by the PIDs target.sh recorded, in the same order as here
    [[ -z "${NGINX_PID}${FASTHTTP_PID}${NODE_PID}${GO_PID}" ]] || target_stop nginx fasthttp node go
    NGINX_PID="" FASTHTTP_PID="" NODE_PID="" GO_PID=""
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
  if [[ -n "${FASTHTTP_PID}" ]]; then
    stop_process "${FASTHTTP_PID}" "fasthttp server"
    FASTHTTP_PID=""
  fi
  stop_node
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

main() {
  local arg
  for arg in "$@"; do
    if [[ "${arg}" == -h || "${arg}" == --help ]]; then
      usage
      return 0
    fi
  done
  printf -v COMMAND_LINE '%q ' "$0" "$@"
  COMMAND_LINE="${COMMAND_LINE% }"
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  trap 'on_error "$?" "${LINENO}" "${BASH_COMMAND}"' ERR

  require_python
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/wrkreport.XXXXXX")"
  read_plan "$@"
  open_ssh
  open_target "$@"
  clients_preflight
  preflight_tools
  raise_nofile
  prepare_work_dir
  build_servers
  ensure_wrkreport
  check_ports

  start_run
  record_clients
  tune_kernel
  start_helper
  run_blocks
  STAGE=""
  finish_run
}

main "$@"
