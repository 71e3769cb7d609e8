# tls.sh: the TLS setups (issue 22): the run's key and certificate, their record, gohello's TLS flags, and one real handshake per setup.
# Sourced by run_bench.sh (its settings and state are there); not run on its own.
# shellcheck shell=bash

# make_tls_key: one key and self-signed certificate for the run, made with openssl in the
# private work dir (WORK/tls, key mode 0600; the work dir, key included, is removed by
# cleanup). Never written under the run directory.
make_tls_key() {
  local key_args=() output
  ((PLAN[tls])) || return 0
  [[ -z "${TARGET}" ]] || die 2 "the TLS setups do not run with --server-host yet (issue 22: key made on the target)"
  command -v openssl >/dev/null 2>&1 || die 2 "the TLS setups need openssl (apt-get install openssl)"
  read -ra key_args <<<"${PLAN[tls_key_args]}"
  TLS_DIR="${WORK}/tls"
  mkdir -m 0700 "${TLS_DIR}"
  output="$(umask 077 && openssl req -x509 -newkey "${key_args[@]}" -nodes -days 2 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "${TLS_DIR}/key.pem" -out "${TLS_DIR}/cert.pem" 2>&1)" ||
    die 1 "openssl could not make the run's ${PLAN[tls_key]} key: ${output}"
  chmod 0600 "${TLS_DIR}/key.pem"
  chmod 0644 "${TLS_DIR}/cert.pem"
  TLS_STATS_SOCKET="${WORK}/gotls.sock"
  log "TLS: a ${PLAN[tls_key]} key and certificate for this run in the private work dir (removed at the end)"
}

# record_tls: the certificate's SHA-256 fingerprint, openssl's version and where the servers
# count resumed connections, into the manifest (`tls`).
record_tls() {
  ((PLAN[tls])) || return 0
  local args=(tls-record --run "${RUN_DIR}" --cert "${TLS_DIR}/cert.pem" --openssl "$(openssl version)")
  [[ -z "${PLAN[go_setups]}" ]] || args+=(--counter go-https "socket:${TLS_STATS_SOCKET}")
  local setup
  for setup in nginx-https nginx-https-unix; do
    [[ -z "${PLAN[url.${setup}]:-}" ]] || args+=(--counter "${setup}" "size:${WORK}/nginx/tls-resumed.${setup}.log")
  done
  helper "${args[@]}"
}

# go_tls_args: gohello's TLS flags when go-https is measured (nothing otherwise).
go_tls_args() {
  GO_TLS_ARGS=()
  [[ -n "${PLAN[url.go-https]:-}" ]] || return 0
  GO_TLS_ARGS=(-tls-port "${PLAN[port.go-https]}" -tls-cert "${TLS_DIR}/cert.pem" -tls-key "${TLS_DIR}/key.pem"
    -tls-version "${PLAN[tls_version]}" -tls-stats-socket "${TLS_STATS_SOCKET}")
  ((!PLAN[tls_resumption])) || GO_TLS_ARGS+=(-tls-resumption)
}

# tls_probe SETUP: one real handshake with SETUP (openssl s_client -brief, no ALPN, no
# resumption), its report saved for pass-ready; sets PROBE=(--tls-probe SETUP FILE).
tls_probe() {
  local setup="$1" url host_port file="${WORK}/$1.handshake.txt"
  PROBE=()
  [[ "${PLAN[url.${setup}]}" == https://* ]] || return 0
  url="${PLAN[url.${setup}]#https://}"
  host_port="${url%/}"
  timeout "${CURL_MAX_TIME_S}" openssl s_client -brief -connect "${host_port}" </dev/null >"${file}" 2>&1 || true
  PROBE=(--tls-probe "${setup}" "${file}")
}
