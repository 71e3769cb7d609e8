#!/bin/sh
# shellcheck disable=SC3045 # ulimit -n and -H: dash, bash, busybox and BSD sh all have them
# server_machine.sh: run_bench.sh's hands on the target machine (--server-host). run_bench.sh copies
# this file into a private work dir made there with mktemp -d and runs it over its ssh
# master connection as `sh DIR/server_machine.sh COMMAND ARGS...`. POSIX sh and coreutils only:
# the target needs no Python. Every server it starts gets a pid file in DIR/pids, so that
# `finish` can stop by PID whatever this run started there, even after the controller lost
# track (the link dropped), and then removes DIR.
#
# Commands (exit 0 ok, 1 "no", 2 usage):
#   start NAME LOG NOFILE PROGRAM|VAR=VALUE ARGS...
#                          ulimit -n NOFILE, start the command in its own session (setsid)
#                          with output to LOG, record and print its PID
#   start-app LOG NOFILE N COMMAND
#                          --app: COMMAND run by bash (sh without it) with GOMAXPROCS=N in its
#                          own session as `app` (stopped with its whole session); print its PID
#   ready PID LOG SECONDS  wait for LOG's " ready" line; 1 if PID exits or time is up
#   running PID...         0 when every PID runs (not a zombie)
#   stop NAME...           SIGTERM, 5 s grace, SIGKILL; then its children still running
#                          (`app`: SIGTERM to its process group, then SIGKILL to its session)
#   nofile CEILING         raise ulimit -n (root: up to CEILING and fs.nr_open), print it
#   prepare USER           make nginx/temp, logs, pids; as root give USER's group access; print the group
#   log CAP FILE           FILE's first CAP bytes, then a note of the bytes cut
#   tcp                    /proc/net/tcp and tcp6 (the helper finds busy ports in them)
#   tls-key ADDRESS OPENSSL-NEWKEY-ARGS...
#                          make the run's TLS key and self-signed certificate in DIR/tls
#                          (key mode 0600, removed with DIR by finish); print the certificate
#   cpu                    read `snap NAME:PID[:session]...`, `children PID`, `running PID...`, `tck`
#                          and `count socket|size PATH` lines; answer each (stat lines with
#                          the name first -- a PID and its children, or with :session every
#                          process of session PID --, child PIDs, yes/no, the clock ticks, a TLS
#                          counter: gohello's stats line or a file's size) and `@@end`: the
#                          helper's one session
#   finish                 stop the cpu reader and every server with a pid file, remove DIR
set -eu

DIR="$(cd "$(dirname "$0")" && pwd)"
STOP_TIMEOUT_TENTHS=50

usage() {
  echo "usage: sh server_machine.sh start|start-app|ready|running|stop|nofile|prepare|log|tcp|cpu|finish ..." >&2
  exit 2
}

# running PID: true while PID exists and is not a zombie.
running() {
  line=""
  { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 1
  state="${line##*) }"
  [ -n "${state}" ] && [ "${state%% *}" != Z ]
}

# children PID: its child processes, one per line.
children() {
  want="$1" found=0
  for f in /proc/"$1"/task/*/children; do
    [ -r "$f" ] || continue
    found=1
    kids=""
    { read -r kids <"$f"; } 2>/dev/null || true
    for kid in ${kids}; do echo "${kid}"; done
  done
  [ "${found}" -eq 0 ] || return 0
  for f in /proc/[0-9]*/stat; do # kernels without CONFIG_PROC_CHILDREN
    line=""
    { read -r line <"$f"; } 2>/dev/null || continue
    # shellcheck disable=SC2086 # splitting the fields after the command name is the point
    set -- ${line##*) }
    if [ "${2:-}" = "${want}" ]; then
      pid="${f#/proc/}"
      echo "${pid%/stat}"
    fi
  done
}

cmd_start() {
  [ $# -ge 4 ] || usage
  name="$1" log="$2" nofile="$3"
  shift 3
  ulimit -n "${nofile}" 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
  mkdir -p "${DIR}/pids"
  # Not a process-group leader (no job control here), so setsid execs in place: $! is the server.
  setsid env "$@" </dev/null >>"${log}" 2>&1 &
  pid=$!
  echo "${pid}" >"${DIR}/pids/${name}"
  echo "${pid}"
}

# session_members SID: the processes of session SID still running (not zombies), one per line.
session_members() {
  sid="$1"
  for f in /proc/[0-9]*/stat; do
    line=""
    { read -r line <"$f"; } 2>/dev/null || continue
    # shellcheck disable=SC2086 # splitting the fields after the command name is the point
    set -- ${line##*) }
    if [ "${4:-}" = "${sid}" ] && [ "$1" != Z ]; then
      pid="${f#/proc/}"
      echo "${pid%/stat}"
    fi
  done
}

cmd_start_app() {
  [ $# -eq 4 ] || usage
  log="$1" nofile="$2" n="$3" command="$4"
  ulimit -n "${nofile}" 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
  mkdir -p "${DIR}/pids"
  shell="sh"
  ! command -v bash >/dev/null 2>&1 || shell=bash # as on the controller, where bash runs it
  # Not a process-group leader, so setsid execs in place: $! is the session's and its group's ID.
  GOMAXPROCS="${n}" setsid "${shell}" -c "${command}" </dev/null >>"${log}" 2>&1 &
  pid=$!
  echo "${pid} session" >"${DIR}/pids/app"
  echo "${pid}"
}

cmd_ready() {
  [ $# -eq 3 ] || usage
  i=0
  while ! grep -qs ' ready$' "$2"; do
    running "$1" || return 1
    [ "${i}" -lt $(($3 * 10)) ] || return 1
    sleep 0.1
    i=$((i + 1))
  done
}

cmd_running() {
  for pid in "$@"; do
    running "${pid}" || return 1
  done
}

# stop_one NAME: stop the server of pid file NAME and whatever children it left; a session's
# (`PID session`: the app) with its whole process group, then every process left in the session.
stop_one() {
  file="${DIR}/pids/$1"
  [ -f "${file}" ] || return 0
  pid="" kind=""
  read -r pid kind <"${file}" || true
  if [ "${kind}" = session ]; then
    stop_session "$1" "${pid}"
  elif running "${pid}"; then
    kids="$(children "${pid}" | tr '\n' ' ')"
    exe="$(readlink "/proc/${pid}/exe" 2>/dev/null || true)"
    kill -TERM "${pid}" 2>/dev/null || true
    i=0
    while running "${pid}" && [ "${i}" -lt "${STOP_TIMEOUT_TENTHS}" ]; do
      sleep 0.1
      i=$((i + 1))
    done
    if running "${pid}"; then
      echo "$1 (pid ${pid}) still running $((STOP_TIMEOUT_TENTHS / 10))s after SIGTERM: SIGKILL"
      kill -KILL "${pid}" 2>/dev/null || true
    fi
    # A child outliving its parent (nginx's workers, node's cluster) is ours if it is the same program.
    for kid in ${kids}; do
      if running "${kid}" && [ -n "${exe}" ] && [ "$(readlink "/proc/${kid}/exe" 2>/dev/null || true)" = "${exe}" ]; then
        kill -KILL "${kid}" 2>/dev/null || true
      fi
    done
  fi
  rm -f "${file}"
}

# stop_session NAME SID: SIGTERM to process group SID, up to the grace for session SID to end,
# then SIGKILL to the group and to every process left in the session (as app.sh's stop_app).
stop_session() {
  [ -n "$(session_members "$2")" ] || return 0
  kill -TERM -- "-$2" 2>/dev/null || true
  i=0
  while [ -n "$(session_members "$2")" ] && [ "${i}" -lt "${STOP_TIMEOUT_TENTHS}" ]; do
    sleep 0.1
    i=$((i + 1))
  done
  left="$(session_members "$2" | tr '\n' ' ')"
  [ -n "${left}" ] || return 0
  echo "$1 (session $2: ${left% }) still running $((STOP_TIMEOUT_TENTHS / 10))s after SIGTERM: SIGKILL"
  kill -KILL -- "-$2" 2>/dev/null || true
  # shellcheck disable=SC2086 # a list of PIDs
  kill -KILL ${left} 2>/dev/null || true
}

cmd_stop() {
  for name in "$@"; do
    stop_one "${name}"
  done
}

cmd_nofile() {
  [ $# -eq 1 ] || usage
  if [ "$(id -u)" = 0 ]; then
    target="$1"
    nr_open="$(cat /proc/sys/fs/nr_open 2>/dev/null || echo "$1")"
    [ "${nr_open}" -ge "${target}" ] || target="${nr_open}"
    ulimit -n "${target}" 2>/dev/null || true
  fi
  ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
  ulimit -n
}

cmd_prepare() {
  [ $# -eq 1 ] || usage
  mkdir -p "${DIR}/nginx/temp" "${DIR}/nginx-variant/temp" "${DIR}/logs" "${DIR}/pids" # nginx-variant: --variant's own prefix
  if [ "$(id -u)" = 0 ]; then
    group="$(id -gn "$1")" || {
      echo "no user $1 to run nginx workers as" >&2
      exit 1
    }
    chgrp "${group}" "${DIR}" "${DIR}/nginx" "${DIR}/nginx/temp" "${DIR}/nginx-variant" "${DIR}/nginx-variant/temp"
    chmod 0710 "${DIR}" "${DIR}/nginx" "${DIR}/nginx/temp" "${DIR}/nginx-variant" "${DIR}/nginx-variant/temp"
    echo "${group}"
  fi
}

cmd_log() {
  [ $# -eq 2 ] || usage
  [ -f "$2" ] || return 0
  size="$(wc -c <"$2")"
  head -c "$1" "$2"
  if [ "${size}" -gt "$1" ]; then
    printf '\n[wrkreport] log capped at %s bytes: %s bytes of later lines dropped\n' "$1" $((size - $1))
  fi
}

cmd_cpu() {
  # Its PID, for finish: after the link dropped, this reader waits on a dead session's
  # stdin until the target's sshd notices, which can take hours. Written whole, then
  # renamed into place: finish never reads the file empty, between its creation and the write.
  echo "$$" >"${DIR}/reader.pid.$$"
  mv -f "${DIR}/reader.pid.$$" "${DIR}/reader.pid"
  while read -r verb rest; do
    case "${verb}" in
      snap)
        for item in ${rest}; do
          name="${item%%:*}" root="${item#*:}" members=""
          case "${root}" in
            *:session) root="${root%:session}" members="$(session_members "${root}")" ;;
            *) members="${root} $(children "${root}")" ;;
          esac
          for pid in ${members}; do
            line=""
            { read -r line <"/proc/${pid}/stat"; } 2>/dev/null || continue
            echo "${name} ${line}"
          done
        done
        ;;
      children)
        children "${rest}"
        ;;
      tck) getconf CLK_TCK ;;
      count)
        kind="${rest%% *}" file="${rest#* }"
        if [ "${kind}" = socket ]; then
          "${DIR}/gohello" -read-tls-stats "${file}" 2>/dev/null || true
        elif [ -f "${file}" ]; then
          echo "size $(wc -c <"${file}")"
        else
          echo "size 0"
        fi
        ;;
      running)
        # shellcheck disable=SC2086 # the PIDs, one word each
        if cmd_running ${rest}; then echo yes; else echo no; fi
        ;;
    esac
    echo "@@end"
  done
}

# stop_reader: end a `server_machine.sh cpu` reader still waiting on a session the link lost.
stop_reader() {
  [ -f "${DIR}/reader.pid" ] || return 0
  pid="$(cat "${DIR}/reader.pid")"
  # Only if that PID is still this reader (not a reused PID): its command line names server_machine.sh.
  if running "${pid}" && tr '\0' ' ' <"/proc/${pid}/cmdline" 2>/dev/null | grep -q "${DIR}/server_machine.sh cpu"; then
    kill -TERM "${pid}" 2>/dev/null || true
  fi
  rm -f "${DIR}/reader.pid"
}

cmd_tls_key() {
  [ $# -ge 2 ] || usage
  address="$1"
  shift
  command -v openssl >/dev/null 2>&1 || {
    echo "no openssl here (apt-get install openssl): the TLS setups' key is made on this machine" >&2
    exit 1
  }
  mkdir -m 0700 "${DIR}/tls"
  if ! (umask 077 && openssl req -x509 -newkey "$@" -nodes -days 2 -subj "/CN=${address}" \
    -keyout "${DIR}/tls/key.pem" -out "${DIR}/tls/cert.pem") >"${DIR}/tls/openssl.log" 2>&1; then
    cat "${DIR}/tls/openssl.log" >&2
    exit 1
  fi
  chmod 0600 "${DIR}/tls/key.pem"
  chmod 0644 "${DIR}/tls/cert.pem"
  cat "${DIR}/tls/cert.pem"
}

cmd_finish() {
  stop_reader
  if [ -d "${DIR}/pids" ]; then
    for file in "${DIR}"/pids/*; do
      [ -f "${file}" ] || continue
      stop_one "${file##*/}"
    done
  fi
  case "${DIR}" in
    */wrkreport.*) rm -rf -- "${DIR}" ;; # only the dir run_bench.sh made with mktemp
  esac
}

main() {
  [ $# -ge 1 ] || usage
  command="$1"
  shift
  case "${command}" in
    start) cmd_start "$@" ;;
    start-app) cmd_start_app "$@" ;;
    ready) cmd_ready "$@" ;;
    running) cmd_running "$@" ;;
    stop) cmd_stop "$@" ;;
    nofile) cmd_nofile "$@" ;;
    prepare) cmd_prepare "$@" ;;
    log) cmd_log "$@" ;;
    tcp) cat /proc/net/tcp /proc/net/tcp6 2>/dev/null || true ;;
    cpu) cmd_cpu ;;
    tls-key) cmd_tls_key "$@" ;;
    finish) cmd_finish ;;
    *) usage ;;
  esac
}

main "$@"
