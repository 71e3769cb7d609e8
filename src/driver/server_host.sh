# server_host.sh: --server-host: one ssh master per remote host, and the target's servers started, checked and stopped over it.
# Sourced by run_bench.sh (its settings and state are there); not run on its own.
# shellcheck shell=bash

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
# Through server_machine.sh in a private work dir made there (TARGET_DIR), over the one master
# connection; every server by its PID (docs/driver.md, "Two machines").

# shq WORD...: the words single-quoted for the target's sh.
shq() {
  local word out=""
  for word in "$@"; do
    out+=" '${word//\'/\'\\\'\'}'"
  done
  printf '%s\n' "${out# }"
}

# on_target COMMAND ARGS...: server_machine.sh COMMAND on the target; exit status 255: ssh failed.
on_target() {
  on_host "${TARGET}" "sh $(shq "${TARGET_DIR}/server_machine.sh" "$@")"
}

# target_lost WHAT: the ssh connection to the target is gone: the run fails, saying so.
target_lost() {
  die 1 "lost the ssh connection to ${TARGET} while ${1}"
}

# open_target OPTIONS...: with --server-host: where ssh reached it (the servers' address unless
# --server-address says otherwise: the plan is made again with it, so the URLs follow), what it
# is (remote.py's facts), its work dir with server_machine.sh, its tools and its ulimit -n.
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
  on_host "${TARGET}" "cat >$(shq "${TARGET_DIR}/server_machine.sh")" <"${TARGET_SCRIPT}" || target_lost "copying server_machine.sh"
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
  local extra
  mapfile -t extra < <(variant_record_args)
  args+=("${extra[@]}")
  while IFS= read -r line; do
    log "${line}"
  done < <(helper "${args[@]}")
}

# render_nginx_target: nginx.conf with the target's paths and address, copied there, checked there with nginx -t.
render_nginx_target() {
  local rlimit="${NGINX_RLIMIT_MAX}" params
  if [[ "${TARGET_NOFILE}" != unlimited ]] && ((TARGET_NOFILE < rlimit)); then
    rlimit="${TARGET_NOFILE}"
  fi
  params="$(helper target-nginx --nginx-v-file "${WORK}/target.nginx-V")" || die 2 "${TARGET}: ${params}"
  on_host "${TARGET}" "test -f $(shq "${params}")" || die 2 "${TARGET}: no ${params} (nginx's stock FastCGI parameters)"
  local shared=(--listen-address "${PLAN[server_address]}" --fastcgi-params "${params}")
  [[ "${TARGET_UID}" != 0 ]] || shared+=(--user "${WORKER_USER_AS_ROOT}" --group "${WORKER_GROUP}")
  local args=(render-nginx --run "${RUN_DIR}" --template "${TEMPLATE}" --prefix "${TARGET_DIR}/nginx"
    --socket "${SOCKET}" --http-socket "${HTTP_SOCKET}" --rlimit "${rlimit}" --out "${RUN_DIR}/nginx.conf" "${shared[@]}")
  helper "${args[@]}"
  nginx_test "${NGINX}" nginx.conf "${TARGET_DIR}/nginx" nginx
  render_variant_nginx "${rlimit}" "${shared[@]}" # --variant: its own nginx.conf there too
}

# target_start VAR NAME LOG ENV/ARGV...: start a server on the target with server_machine.sh (setsid,
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

# target_start_app N COMMAND LOG: --app on the target: COMMAND ({port} and {host} filled in) run
# there by server_machine.sh start-app (bash, GOMAXPROCS=N, its own session, ulimit -n raised),
# APP_PIDS[app] its session's ID there; ready when it answers from here (app_ready); its log fetched either way.
target_start_app() {
  local rc=0
  APP_PIDS[app]="$(on_target start-app "${TARGET_DIR}/logs/${3##*/}" "${TARGET_NOFILE}" "$1" "$2" </dev/null)" || target_lost "starting your app"
  app_ready "${APP_PIDS[app]}" "$(app_where app)" app || rc=$?
  fetch_log "$3"
  return "${rc}"
}

# fetch_log LOG: the target's logs/LOG (its first LOG_FETCH_CAP bytes) into the run's logs/.
fetch_log() {
  on_target log "${LOG_FETCH_CAP}" "${TARGET_DIR}/logs/${1##*/}" >"${RUN_DIR}/logs/${1##*/}" </dev/null || true
}

# fetch_logs N: every server log of this block from the target (at the block's end).
fetch_logs() {
  local name
  for name in go fasthttp node app; do
    [[ -z "${PLAN[${name}_setups]}" ]] || fetch_log "$(server_log "${name}" "$1")"
  done
  [[ -z "${PLAN[nginx_setups]}" ]] || fetch_log "nginx-error.gomaxprocs-$1.log"
  [[ -z "${PLAN[vnginx_setups]}" ]] || fetch_log "nginx-variant-error.gomaxprocs-$1.log"
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

# target_stop NAME...: stop servers on the target by their PIDs (server_machine.sh stop: SIGTERM, SIGKILL, children).
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
    timeout 20 "${SSH[@]}" "sh $(shq "${TARGET_DIR}/server_machine.sh") finish" </dev/null >&2 || rc=$?
    ((rc != 0)) || break
    if ((SECONDS >= deadline)); then
      log "warning: could not reach ${TARGET} for ${TARGET_CLEANUP_S}s: the servers this run started there may still run; stop them and remove the work dir with: ssh ${TARGET} sh ${TARGET_DIR}/server_machine.sh finish"
      break
    fi
    log "cannot reach ${TARGET} to stop its servers (ssh exit status ${rc}); trying again"
    sleep 2
  done
  TARGET_DIR=""
}
