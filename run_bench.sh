#!/usr/bin/env bash
# run_bench.sh: measure what putting nginx in front of a Go server costs, as in the 2013
# article "Benchmarking Nginx with Go". Four setups -- Go net/http alone, and nginx in
# front of it over HTTP, FastCGI/TCP and FastCGI/Unix socket -- (and on request four
# more, Node's http module among them) are loaded with wrk (or ApacheBench) at each
# GOMAXPROCS value and connection level, on 127.0.0.1 only, recording the CPU time the
# servers and the load generator use. Every result lands in
# OUT/<run-id>/ as documented in docs/raw-format.md; `wrkreport build` turns it into a report.
#
# This script orchestrates processes only, one function per step of a run, its parts in
# src/driver/ by concern (usage.txt is the --help text); plans, JSON,
# arithmetic and text formatting are in src/wrkreport/bench/ (standard library only, run
# from the checkout). The contract between the two: docs/driver.md.
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly ROOT
readonly TEMPLATE="${ROOT}/templates/nginx.conf.tmpl"
readonly GO_SOURCE="${ROOT}/src/gohello"
readonly HIST_SCRIPT="${ROOT}/src/wrkreport/bench/histogram.lua" # wrk -s: its done() writes the latency histogram
readonly TARGET_SCRIPT="${ROOT}/src/wrkreport/bench/server_machine.sh"  # copied to the target: starts, checks, stops there
readonly FASTHTTP_SOURCE="${ROOT}/src/gofasthttp"
readonly NODE_SOURCE="${ROOT}/src/nodehello/server.js"
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
READY_TIMEOUT_S=10 # how long a server may take to answer after its start: --ready-timeout (read_plan)
GO_PID=""
FASTHTTP_PID=""
NODE_PID=""       # nodehello: the one process, or the cluster's primary
NODE_WORKERS=()   # the cluster's workers (from pass-ready), stopped by the primary; killed if they outlive it
NODE=""           # the node binary
NGINX_PID=""
NGINX_WORKERS=()
VNGINX_PID=""      # --variant: its nginx master (variant.sh)
VNGINX_WORKERS=()
VARIANT_NGINX=""   # its binary: nginx=PATH, else the run's
VARIANT_PREFIX=""  # its prefix in the private work dir
VARIANT_PIN=()     # taskset -c LIST of pin-server=, else SERVER_PIN's
WRK_PID=""
BLOCK=0           # the block being run (1-based; per GOMAXPROCS value)
NEXT_BLOCK=""     # the stopping rule's next block, as `decide` planned it: GOMAXPROCS ROUNDS WARMUP SETUPS
NEXT_SETUPS=""    # the setups this block measures (comma list); empty: every setup
NEXT_WARMUP=""    # this block's warm-up seconds per setup; empty: the plan's
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
TARGET_DIR=""     # the private work dir on the target (mktemp -d there; server_machine.sh finish removes it)
TARGET_UID=""     # the uid ssh logs in as on the target
TARGET_NOFILE=""  # ulimit -n the remote shell starting each server raises to
TARGET_ARCH=()    # GOARCH=... (GOARM=...) for go build
TARGET_SSH=()     # the address and port ssh reached the target at ($SSH_CONNECTION there)
CLIENTS_STATE=""  # --client-hosts: the helper's state file of the clients (clients_preflight); removed there in cleanup
TLS_DIR=""        # the run's key and certificate (make_tls_key), inside WORK (or TARGET_DIR on the target)
TLS_CERT=""       # the certificate here (a copy from the target with --server-host)
TLS_STATS_SOCKET="" # gohello's handshake counts (go-https)
TLS_LOG_DIR=""    # where nginx logs resumed TLS connections (its prefix)
TLS_COUNTER=""    # one setup's counter (tls_counter)
GO_TLS_ARGS=()    # gohello's TLS flags (go_tls_args)
PROBE=()          # one handshake's report for pass-ready (tls_probe)
VEGETA=""         # the pinned vegeta binary (build_vegeta), when the run has a fixed-rate phase
APP_B_PID=""      # --app-b: its second build's PID, its process group's ID (app_b.sh)
GROUP_PID=""      # the PID of the last server start_in_group started
APP_B_LOG=""      # its log this block
APP_WHY=""        # why an app process did not start (start_app, start_app_b)
APP_CHECKED=0     # 1 once the first block has checked its answers (before: a failure is bad input, exit 2)
APP_HEADER_ARGS=() # -H "Name: value" of each --app-header (wrk, curl)
APP_RATE_ARGS=()  # --header "Name: value" of each, for measure-rate and rate-warm-up (vegeta)
APP_BODY=()       # --app-body SETUP FILE of one capture (app_capture)
H2_BODY=()        # --h2-body SETUP FILE of one h2 setup's capture (h2_capture)
declare -A PLAN=()
declare -A DOWN=() # server name -> why it did not start in this pass
declare -A APP_PIDS=() # app process name (app, app-unix, app-fcgi) -> its PID, its process group's ID (start_in_group)
declare -A APP_LOGS=() # app process name -> its log this block
declare -A FRONT_PIDS=() # front end in nginx's place (haproxy, caddy, apache) -> its PID, its process group's ID (front_ends.sh)
declare -A FRONT_BINS=() # front end -> its program (front_end_binary)
CADDY_ENV=()      # env's arguments for Caddy (caddy_environment)
# --- Parts, by concern (src/driver/) ------------------------------------------------------
readonly DRIVER="${ROOT}/src/driver"
# shellcheck source=src/driver/common.sh
source "${DRIVER}/common.sh"
# shellcheck source=src/driver/preflight.sh
source "${DRIVER}/preflight.sh"
# shellcheck source=src/driver/server_host.sh
source "${DRIVER}/server_host.sh"
# shellcheck source=src/driver/remote_clients.sh
source "${DRIVER}/remote_clients.sh"
# shellcheck source=src/driver/servers.sh
source "${DRIVER}/servers.sh"
# shellcheck source=src/driver/measuring.sh
source "${DRIVER}/measuring.sh"
# shellcheck source=src/driver/cleanup.sh
source "${DRIVER}/cleanup.sh"
# shellcheck source=src/driver/tls.sh
source "${DRIVER}/tls.sh"
# shellcheck source=src/driver/fixed_rate.sh
source "${DRIVER}/fixed_rate.sh"
# shellcheck source=src/driver/variant.sh
source "${DRIVER}/variant.sh"
# shellcheck source=src/driver/app.sh
source "${DRIVER}/app.sh"
# shellcheck source=src/driver/app_b.sh
source "${DRIVER}/app_b.sh"
# shellcheck source=src/driver/front_ends.sh
source "${DRIVER}/front_ends.sh"

# usage: the options, from their one place (src/driver/usage.txt).
usage() {
  cat "${DRIVER}/usage.txt"
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
  trap 'on_error "$?" "${BASH_SOURCE[0]##*/}:${LINENO}" "${BASH_COMMAND}"' ERR

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
  build_vegeta
  make_tls_key
  ensure_wrkreport
  check_ports

  start_run
  record_vegeta
  record_tls
  record_clients
  tune_kernel
  start_helper
  run_blocks
  run_rate_phase
  STAGE=""
  finish_run
}

main "$@"
