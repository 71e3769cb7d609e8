# tls.sh: the TLS setups: the run's key and certificate, their record, gohello's TLS flags, and one real handshake per setup.
# Sourced by run_bench.sh (its settings and state are there); not run on its own.
# shellcheck shell=bash

# make_tls_key: one key and self-signed certificate for the run, made with openssl in the
# private work dir of the machine running the servers (WORK/tls here, TARGET_DIR/tls on
# --server-host; key mode 0600; the work dir, key included, is removed at the end). Never
# written under the run directory; only the certificate comes back from a target.
make_tls_key() {
  local key_args=() output
  ((PLAN[tls])) || return 0
  command -v openssl >/dev/null 2>&1 || die 2 "the TLS setups need openssl here for the handshake probe (apt-get install openssl)"
  read -ra key_args <<<"${PLAN[tls_key_args]}"
  mkdir -m 0700 "${WORK}/tls"
  TLS_CERT="${WORK}/tls/cert.pem"
  if [[ -n "${TARGET}" ]]; then
    TLS_DIR="${TARGET_DIR}/tls"
    TLS_STATS_SOCKET="${TARGET_DIR}/gotls.sock"
    TLS_LOG_DIR="${TARGET_DIR}/nginx"
    on_target tls-key "${PLAN[server_address]}" "${key_args[@]}" >"${TLS_CERT}" 2>"${WORK}/tls/target.log" </dev/null ||
      die 2 "${TARGET}: could not make the run's ${PLAN[tls_key]} key there: $(head -c 300 "${WORK}/tls/target.log")"
    log "TLS: a ${PLAN[tls_key]} key and certificate for this run in the private work dir on ${TARGET} (removed at the end)"
    return 0
  fi
  TLS_DIR="${WORK}/tls"
  output="$(umask 077 && openssl req -x509 -newkey "${key_args[@]}" -nodes -days 2 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "${TLS_DIR}/key.pem" -out "${TLS_DIR}/cert.pem" 2>&1)" ||
    die 1 "openssl could not make the run's ${PLAN[tls_key]} key: ${output}"
  chmod 0600 "${TLS_DIR}/key.pem"
  chmod 0644 "${TLS_DIR}/cert.pem"
  TLS_STATS_SOCKET="${WORK}/gotls.sock"
  TLS_LOG_DIR="${WORK}/nginx"
  log "TLS: a ${PLAN[tls_key]} key and certificate for this run in the private work dir (removed at the end)"
}

# record_tls: the certificate's SHA-256 fingerprint, openssl's version and which server
# counts each TLS setup's resumed connections, into the manifest (`tls`). Where they count
# (a socket, a log in the private work dir) is not recorded: measure gets it (tls_counter).
record_tls() {
  ((PLAN[tls])) || return 0
  local args=(tls-record --run "${RUN_DIR}" --cert "${TLS_CERT}" --openssl "$(openssl version)") setup tls_setups=()
  read -ra tls_setups <<<"${PLAN[tls_setups]}"
  for setup in "${tls_setups[@]}"; do
    tls_counter "${setup}"
    args+=(--counter "${setup}" "${TLS_COUNTER%%:*}")
  done
  helper "${args[@]}"
}

# tls_counter SETUP: where SETUP's server counts its TLS handshakes and resumed connections
# (TLS_COUNTER, empty for a plain setup): gohello's stats socket (socket:PATH), or the size
# of the access log nginx writes 2 bytes to per resumed connection in SETUP's server block
# (size:PATH); a new-connection setup's are its server's.
tls_counter() {
  local served="${PLAN[serves.$1]:-$1}"
  TLS_COUNTER=""
  case "${served}" in
    go-https | go-h2) TLS_COUNTER="socket:${TLS_STATS_SOCKET}" ;; # one count for both listeners, read around each measurement
    nginx-https*~* | nginx-h2*~*) TLS_COUNTER="size:${VARIANT_PREFIX}/tls-resumed.${served%%~*}.log" ;; # a --variant twin: its nginx's prefix
    nginx-https* | nginx-h2*) TLS_COUNTER="size:${TLS_LOG_DIR}/tls-resumed.${served}.log" ;;
  esac
}

# is_h2_setup SETUP: true for an HTTP/2 setup (go-h2, nginx-h2, nginx-h2-unix).
is_h2_setup() {
  [[ " ${PLAN[h2_setups]:-} " == *" $1 "* ]]
}

# h2_capture SETUP URL FILE: one GET of an h2 setup over HTTP/2 (curl --http2: h2 offered by
# ALPN, -k: the run's own certificate): its header block in FILE ('HTTP/2 200' and the
# decoded fields), its body in the work dir (H2_BODY: pass-ready's --h2-body); curl's status.
h2_capture() {
  local body="${WORK}/$1.body" rc=0
  curl -k -s --http2 -D "$3" -o "${body}" --max-time "${CURL_MAX_TIME_S}" "$2" || rc=$?
  H2_BODY=(--h2-body "$1" "${body}")
  return "${rc}"
}

# go_tls_args: gohello's TLS flags when go-https or go-h2 is measured (nothing otherwise):
# go-h2 is a second listener (-h2) with go-https's settings; a run without go-https gives
# -h2-only, so gohello opens no go-https listener that no setup of the run uses.
go_tls_args() {
  GO_TLS_ARGS=()
  [[ -n "${PLAN[port.go-https]:-}${PLAN[port.go-h2]:-}" && -n "${TLS_DIR}" ]] || return 0 # go-https(-new) or go-h2 measured
  GO_TLS_ARGS=(-tls-cert "${TLS_DIR}/cert.pem" -tls-key "${TLS_DIR}/key.pem"
    -tls-version "${PLAN[tls_version]}" -tls-stats-socket "${TLS_STATS_SOCKET}")
  ((!PLAN[tls_resumption])) || GO_TLS_ARGS+=(-tls-resumption)
  [[ -z "${PLAN[port.go-https]:-}" ]] || GO_TLS_ARGS+=(-tls-port "${PLAN[port.go-https]}")
  [[ -z "${PLAN[port.go-h2]:-}" ]] || GO_TLS_ARGS+=(-h2 -h2-port "${PLAN[port.go-h2]}")
  [[ -n "${PLAN[port.go-https]:-}" ]] || GO_TLS_ARGS+=(-h2-only)
}

# tls_probe SETUP: one real handshake with SETUP (openssl s_client -brief, no resumption;
# ALPN h2 offered to an h2 setup, none to the others), its report saved for pass-ready;
# sets PROBE=(--tls-probe SETUP FILE). -brief does not say the ALPN protocol: for an h2
# setup a second handshake's full report gives its line ("ALPN protocol: h2" or "No ALPN
# negotiated"), appended.
tls_probe() {
  local setup="$1" url host_port file="${WORK}/$1.handshake.txt" alpn=()
  PROBE=()
  ! is_h2_setup "${setup}" || alpn=(-alpn h2)
  [[ "${PLAN[url.${setup}]}" == https://* ]] || return 0
  url="${PLAN[url.${setup}]#https://}"
  host_port="${url%/}"
  timeout "${CURL_MAX_TIME_S}" openssl s_client -brief "${alpn[@]}" -connect "${host_port}" </dev/null >"${file}" 2>&1 || true
  if ((${#alpn[@]})); then
    timeout "${CURL_MAX_TIME_S}" openssl s_client "${alpn[@]}" -connect "${host_port}" </dev/null 2>/dev/null |
      grep -a -E '^(ALPN protocol: |No ALPN negotiated)' >>"${file}" || true
  fi
  PROBE=(--tls-probe "${setup}" "${file}")
}
