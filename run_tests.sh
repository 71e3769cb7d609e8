#!/usr/bin/env bash
# run_tests.sh: the project's test command. Installs what the tests need on a fresh
# Debian/Ubuntu machine (as root: nginx, wrk, curl, ab (apache2-utils), node (nodejs), h2load (nghttp2-client),
# haproxy, caddy and apache2 with apt-get; the wrkreport package
# with its test extras, in a virtualenv when the system Python refuses pip), then runs
# `go test` for the Go servers and pytest, including the real end-to-end runs.
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly ROOT
readonly VENV="${ROOT}/.venv"
readonly TOOLS=(nginx wrk curl ab node h2load haproxy caddy apache2) # the last three: the front ends in nginx's place (HAProxy, Caddy, Apache httpd)
readonly REAL="(slow or browser or simulation)" # the tests that start a server, a tool or a browser, or simulate thousands of runs (plain pytest leaves them out)
readonly REAL_WORKERS="${WRKREPORT_REAL_WORKERS:-6}" # pytest-xdist's -n for those that judge no timing: runs side by side
readonly STOP_GRACE_S=30 # how long the tests may take to tear down after SIGTERM before SIGKILL
SESSION_JOB="" # the running pytest (its process group), for stop_session
TIER_TIMES=() # "NAME N s" of each tier run by test_once, logged at its end
PYTHON=""
readonly SSHD_CACHE="${WRKREPORT_SSHD_CACHE:-${HOME}/.cache/wrkreport/openssh-server}" # see fetch_sshd; tests/netlab.py reads the same

usage() {
  cat <<'EOF'
Usage: ./run_tests.sh [--coverage] [--repeat N | --explore N] [pytest arguments...]

Run every test of the project: `go test ./...` in each Go module under src/, then pytest
(unit tests, real wrk fixtures, and end-to-end tests that start nginx, wrk and the Go
server on 127.0.0.1). Missing tools are installed first when run as root:
  - nginx (nginx-light), wrk, curl, ab (apache2-utils), node (nodejs), h2load (nghttp2-client)
    and the other front ends haproxy, caddy and apache2 with apt-get, said before it is done
    (a server package's own service is left as the package sets it; the tests never use it);
  - sshd for the two-machine tests (tests/netlab.py: hosts in network namespaces): when
    /usr/sbin/sshd is absent, Debian's openssh-server is downloaded and unpacked into
    ~/.cache/wrkreport/openssh-server (not installed, so no system sshd is started);
  - the wrkreport package with its test extras: `pip install -e '.[test]'`, or, when the
    system Python refuses pip (Debian 12: "externally managed"), into ./.venv.
The browser tests drive the system Chromium (apt-get install chromium; .ci/run installs it)
through Playwright, which the test extras install without downloading a browser. Without
Chromium or Playwright they are skipped with their reason; with CI=true a skipped slow or
browser test, or a test module skipped at import, fails.

Without arguments the code's style is checked first (ruff check and ruff format --check on
src/, tests/ and benchmarks/, as pyproject.toml's [tool.ruff] configures them: a breach fails
the run, after the tests), then pytest runs three times (tests/README.md, "Tiers"): plain `pytest`, the
tests that start nothing (pyproject's addopts: -m "not slow and not browser and not simulation",
on every CPU with pytest-xdist); then the real runs, browser tests and simulations that judge no
timing or rate, side by side on 6 workers (WRKREPORT_REAL_WORKERS=N sets N); then those that do (marked alone),
one at a time. Each tier prints its 20 slowest tests and its wall time as it ends, and the
wall times again at the end (budgets: tests/README.md). Arguments are passed to one pytest
instead, e.g. ./run_tests.sh -k parse -q

SIGINT or SIGTERM ends the tests as Ctrl-C does (their fixtures torn down), then ends every
process they left (found by the session's WRKREPORT_TEST_SESSION in its environment) and
deletes the lab's network namespaces (tests/netlab.py sweep): nothing they started outlives it.

--coverage measures line and branch coverage of src/wrkreport (coverage.py, through
pytest-cov; the Python processes the tests start are measured too) over the whole run and
prints its report; the data is left in ./.coverage.

--repeat N runs go test and pytest N times in a row after one install (to catch a flaky
test: ./run_tests.sh --repeat 5 -q), printing each run's pytest summary line, exit status
and wall time as it ends and all of them again at the end; its pytest output is kept in
a temporary file whose path is printed. The exit status is the first failing run's.

Hypothesis properties run derandomized (tests/properties.py): the same tree gives the same
result every time, each with its full count of examples here (WRKREPORT_PROPERTIES=full;
plain pytest runs a quarter of each, `quick`). --explore N runs only the properties (pytest
-m property), each with at least N new random examples and Hypothesis's statistics (examples
run per property); a failure it finds is printed with its example, to be added as an
@example of that test.

Exit status: pytest's (0 all passed; 1 failures; 5 no test ran), 2 when a tool is missing
and cannot be installed, go test's when it fails, 130 on SIGINT and 143 on SIGTERM.
EOF
}

log() { printf '[run_tests] %s\n' "$*" >&2; }

die() {
  log "error: $*"
  exit 2
}

install_tools() {
  local missing=() tool
  for tool in "${TOOLS[@]}"; do
    command -v "${tool}" >/dev/null 2>&1 || [[ -x "/usr/sbin/${tool}" ]] || missing+=("${tool}")
  done
  ((${#missing[@]} > 0)) || return 0
  local packages=("${missing[@]/#nginx/nginx-light}")
  packages=("${packages[@]/#node/nodejs}")
  packages=("${packages[@]/#ab/apache2-utils}")
  packages=("${packages[@]/#h2load/nghttp2-client}")
  if ((EUID != 0)) || ! command -v apt-get >/dev/null 2>&1; then
    die "missing ${missing[*]}; install with: sudo apt-get update && sudo apt-get install -y ${packages[*]}"
  fi
  log "missing ${missing[*]}: apt-get install ${packages[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
  log "note: a server's package (nginx, haproxy, caddy, apache2) may enable its own service; the tests never use or touch it"
}

# lab_tools: ssh, ssh-keygen and ip (the lab's namespaces and veth pairs), as root when missing.
lab_tools() {
  local packages=()
  command -v ssh >/dev/null 2>&1 && command -v ssh-keygen >/dev/null 2>&1 || packages+=(openssh-client)
  command -v ip >/dev/null 2>&1 || packages+=(iproute2)
  ((${#packages[@]} > 0)) || return 0
  log "apt-get install ${packages[*]} (for the two-machine tests)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
}

# fetch_sshd: the two-machine tests (tests/netlab.py) run Debian's sshd inside network
# namespaces. When /usr/sbin/sshd is absent, openssh-server (and libwrap0, which it links)
# are downloaded and unpacked into SSHD_CACHE, not installed: installing the package
# would start a system-wide sshd listening on every address.
fetch_sshd() {
  if ((EUID == 0)) && command -v apt-get >/dev/null 2>&1; then
    lab_tools
  fi
  [[ ! -x /usr/sbin/sshd && ! -x "${SSHD_CACHE}/root/usr/sbin/sshd" ]] || return 0
  if ((EUID != 0)) || ! command -v apt-get >/dev/null 2>&1; then
    log "no sshd: the two-machine tests will skip (as root this script unpacks Debian's openssh-server)"
    return 0
  fi
  local download
  download="$(mktemp -d)"
  log "unpacking Debian's openssh-server and libwrap0 into ${SSHD_CACHE} (not installed, no service started)"
  (cd "${download}" && apt-get download -qq openssh-server libwrap0 2>/dev/null) ||
    { apt-get update -qq && (cd "${download}" && apt-get download -qq openssh-server libwrap0); } ||
    die "apt-get download openssh-server libwrap0 failed"
  mkdir -p "${SSHD_CACHE}"
  local deb
  for deb in "${download}"/*.deb; do
    dpkg-deb -x "${deb}" "${SSHD_CACHE}/root"
  done
  rm -rf -- "${download}"
}

# python_with_package: print a Python that has wrkreport[test] installed from this checkout.
python_with_package() {
  local python=python3 log_file
  log_file="$(mktemp)"
  if [[ -x "${VENV}/bin/python" ]]; then
    python="${VENV}/bin/python"
  fi
  log "pip install -e '.[test]' (${python})"
  if ! "${python}" -m pip install --quiet -e "${ROOT}[test]" >"${log_file}" 2>&1; then
    if ! grep -q externally-managed-environment "${log_file}"; then
      cat "${log_file}" >&2
      rm -f "${log_file}"
      die "pip install -e '.[test]' failed"
    fi
    log "the system Python refuses pip; using a virtualenv in ${VENV}"
    python3 -m venv "${VENV}" >/dev/null 2>&1 || {
      ((EUID == 0)) || die "python3 -m venv failed; install python3-venv"
      log "apt-get install python3-venv"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null
      python3 -m venv "${VENV}"
    }
    python="${VENV}/bin/python"
    "${python}" -m pip install --quiet -e "${ROOT}[test]" >&2 || die "pip install -e '.[test]' failed in ${VENV}"
  fi
  rm -f "${log_file}"
  printf '%s\n' "${python}"
}

go_tests() {
  local module
  for module in "${ROOT}"/src/*/go.mod; do
    log "go test ($(dirname "${module#"${ROOT}"/}"))"
    (cd "$(dirname "${module}")" && go test ./...)
  done
}

# style_check PYTHON: the code's style by its tool (pyproject.toml's [tool.ruff]): the rules, then the format, on
# src/, tests/ and benchmarks/; 1 on a breach, each one printed with its file and line.
style_check() {
  local python="$1" rc=0
  log "ruff check and ruff format --check (src, tests, benchmarks)"
  (cd "${ROOT}" && "${python}" -m ruff check --quiet src tests benchmarks) || rc=1
  (cd "${ROOT}" && "${python}" -m ruff format --check --quiet src tests benchmarks) || rc=1
  return "${rc}"
}

# test_once PYTHON [pytest arguments...]: go test, then pytest; return the first failure's status.
# Without arguments pytest runs in three parts (tests/README.md, "Tiers"):
#   1. plain `pytest`: the tests that start nothing (pyproject's addopts: -m "not slow and not
#      browser and not simulation", -n auto), CPU-bound, spread over the CPUs;
#   2. the real runs, the browser tests and the simulations (marked `simulation`: CPU-bound, they
#      fill the CPU the real runs leave while their tools wait) that judge no timing or rate, side by
#      side on REAL_WORKERS workers (the real ones' time is mostly the tools' fixed durations); a
#      module's shared run stays on one worker (--dist loadgroup, tests/conftest.py);
#   3. those that judge a timing or a rate (marked `alone`), one at a time, the machine to themselves.
# Each tier prints its 20 slowest tests (--durations=20) and its wall time, to hold against its budget.
# With arguments: one pytest, as given.
test_once() {
  local python="$1"
  shift
  go_tests
  if (($# > 0)); then
    log "pytest -m '' -n 0 $* (every tier, one at a time, unless the arguments say otherwise)"
    in_session "${python}" -m pytest -m "" -n 0 "$@"
    return
  fi
  local rc=0 part
  TIER_TIMES=()
  style_check "${python}" || rc=$?
  log "pytest (the tests that start nothing: pyproject's addopts, on every CPU)"
  part=0
  tier first "${python}" -m pytest --durations=20 || part=$?
  ((rc != 0)) || rc=${part}
  log "pytest -m '${REAL} and not alone' -n ${REAL_WORKERS} (the real runs, the browser and the simulations, side by side)"
  part=0
  tier side "${python}" -m pytest -m "${REAL} and not alone" -n "${REAL_WORKERS}" --dist loadgroup --durations=20 || part=$?
  ((rc != 0)) || rc=${part}
  log "pytest -m '${REAL} and alone' -n 0 (the ones that judge a timing or a rate, one at a time)"
  part=0
  tier alone "${python}" -m pytest -m "${REAL} and alone" -n 0 --durations=20 || part=$?
  ((rc != 0)) || rc=${part}
  local IFS=";"
  log "wall time per tier (budgets: tests/README.md, \"Tiers\"):${TIER_TIMES[*]}"
  return "${rc}"
}

# tier NAME COMMAND...: run one tier's pytest (in_session) and log its wall time as it ends;
# the time is kept in TIER_TIMES for the line at the end. Its exit status is pytest's.
tier() {
  local name="$1" start=${SECONDS} status=0
  shift
  in_session "$@" || status=$?
  TIER_TIMES+=(" ${name} $((SECONDS - start)) s")
  log "${name} tier: $((SECONDS - start)) s wall (exit ${status})"
  return "${status}"
}

# in_session COMMAND...: run COMMAND (a pytest) as a job of its own process group and wait for it;
# on SIGINT or SIGTERM (Ctrl-C, a CI timeout) stop_session ends it with everything it started.
in_session() {
  (cd "${ROOT}" && exec "$@") &
  SESSION_JOB=$!
  local rc=0
  wait "${SESSION_JOB}" || rc=$?
  SESSION_JOB=""
  return "${rc}"
}

# stop_session SIGNAL_NAME: SIGTERM to the running pytest's process group (conftest.py turns it into
# KeyboardInterrupt: every fixture torn down), a grace period, SIGKILL, then the sweep.
stop_session() {
  trap '' INT TERM
  log "stopped by SIG$1: ending the tests and everything they started"
  if [[ -n "${SESSION_JOB}" ]]; then
    kill -TERM -- "-${SESSION_JOB}" 2>/dev/null || true
    local waited=0
    while kill -0 -- "-${SESSION_JOB}" 2>/dev/null && ((waited < STOP_GRACE_S * 10)); do
      sleep 0.1
      waited=$((waited + 1))
    done
    kill -KILL -- "-${SESSION_JOB}" 2>/dev/null || true
  fi
  sweep_session
  [[ "$1" == INT ]] && exit 130
  exit 143
}

# sweep_session: whatever this run's tests started and left (a process killed before its fixture's
# teardown): every process carrying this session's WRKREPORT_TEST_SESSION (servers, load
# generators, ssh masters that detached), the lab namespaces it made (tests/netlab.py sweep), and
# its port reservations. Runs however the run ends (the EXIT trap).
sweep_session() {
  [[ -n "${WRKREPORT_TEST_SESSION:-}" ]] || return 0
  local environ pid pids=()
  for environ in /proc/[0-9]*/environ; do
    pid="${environ#/proc/}"
    pid="${pid%/environ}"
    [[ "${pid}" != "$$" && "${pid}" != "${BASHPID}" ]] || continue
    grep -qzx "WRKREPORT_TEST_SESSION=${WRKREPORT_TEST_SESSION}" "${environ}" 2>/dev/null && pids+=("${pid}")
  done
  if ((${#pids[@]} > 0)); then
    log "ending ${#pids[@]} process(es) the tests left: ${pids[*]}"
    kill -KILL "${pids[@]}" 2>/dev/null || true
  fi
  if [[ -f "/tmp/wrkreport-test-labs.${WRKREPORT_TEST_SESSION}" ]]; then
    "${PYTHON:-python3}" "${ROOT}/tests/netlab.py" sweep "/tmp/wrkreport-test-labs.${WRKREPORT_TEST_SESSION}" || true
  fi
  rm -f -- "/tmp/wrkreport-test-ports.${WRKREPORT_TEST_SESSION}"
}

# with_coverage PYTHON [pytest arguments...]: test_once with coverage.py measuring src/wrkreport
# (line and branch, in the tests and in every Python process they start: pyproject's
# [tool.coverage]), then its report; the data in .coverage at the checkout's top.
with_coverage() {
  local python="$1" rc=0
  shift
  rm -f -- "${ROOT}"/.coverage "${ROOT}"/.coverage.*
  export COVERAGE_FILE="${ROOT}/.coverage"
  export PYTEST_ADDOPTS="${PYTEST_ADDOPTS:-} --cov --cov-append --cov-report="
  log "coverage: line and branch coverage of src/wrkreport over every tier"
  test_once "${python}" "$@" || rc=$?
  unset PYTEST_ADDOPTS
  (cd "${ROOT}" && "${python}" -m coverage combine --append --quiet 2>/dev/null || true)
  (cd "${ROOT}" && "${python}" -m coverage report --skip-covered --sort=cover | tail -n 25) >&2
  return "${rc}"
}

# summary_line FILE: pytest's closing line in FILE ("N passed, M failed in T s"), bare.
summary_line() {
  grep -E '(passed|failed|error|no tests ran)' "$1" | tail -n 1 | sed -E 's/^=+ //; s/ =+$//'
}

# repeat_tests N PYTHON [pytest arguments...]: test_once N times in a row; say each run's
# summary line, status and wall time; return the first failing run's status.
repeat_tests() {
  local count="$1" python="$2" i rc first_rc=0 start output line lines=()
  shift 2
  output="$(mktemp "${TMPDIR:-/tmp}/run_tests.XXXXXX")"
  log "--repeat ${count}: pytest output of each run in ${output}"
  for ((i = 1; i <= count; i++)); do
    start=${SECONDS}
    rc=0
    test_once "${python}" "$@" 2>&1 | tee -a "${output}.${i}" || rc=$?
    line="run ${i}/${count}: $(summary_line "${output}.${i}") (exit ${rc}, $((SECONDS - start)) s)"
    cat "${output}.${i}" >>"${output}"
    rm -f -- "${output}.${i}"
    log "${line}"
    lines+=("${line}")
    ((first_rc != 0 || rc == 0)) || first_rc=${rc}
  done
  log "--repeat ${count}, every run:"
  printf '[run_tests]   %s\n' "${lines[@]}" >&2
  return "${first_rc}"
}

main() {
  if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
    usage
    return 0
  fi
  local repeat=1 explore=0 coverage=0
  if [[ "${1:-}" == --coverage ]]; then
    coverage=1
    shift
  fi
  if [[ "${1:-}" == --repeat ]]; then
    [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || die "--repeat needs a whole number of runs, at least 1 (got '${2:-}')"
    repeat="$2"
    shift 2
  elif [[ "${1:-}" == --explore ]]; then
    [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || die "--explore needs a whole number of examples per property, at least 1 (got '${2:-}')"
    explore="$2"
    shift 2
  fi
  command -v go >/dev/null 2>&1 || die "go is not installed (https://go.dev/dl/ or apt-get install golang-go)"
  install_tools
  fetch_sshd
  local python
  python="$(python_with_package)"
  PYTHON="${python}"
  # Everything the tests start carries this in its environment: the sweep finds what they left by it.
  WRKREPORT_TEST_SESSION="$(tr -d '-' </proc/sys/kernel/random/uuid)"
  export WRKREPORT_TEST_SESSION
  WRKREPORT_PROPERTIES="${WRKREPORT_PROPERTIES:-full}" # every property's own example count (plain pytest: a quarter)
  export WRKREPORT_PROPERTIES
  set -m # each pytest a job in a process group of its own (in_session), ended as one on a signal
  trap 'stop_session INT' INT
  trap 'stop_session TERM' TERM
  trap sweep_session EXIT
  # Tests start run_bench.sh and wrkreport as commands: the same environment must provide them.
  PATH="$(dirname "${python}"):${PATH}"
  export PATH
  if ((coverage)); then
    with_coverage "${python}" "$@"
  elif ((explore > 0)); then
    log "exploring: every Hypothesis property with at least ${explore} new random examples"
    (cd "${ROOT}" && WRKREPORT_EXPLORE="${explore}" "${python}" -m pytest -m property --hypothesis-show-statistics "$@")
  elif ((repeat > 1)); then
    repeat_tests "${repeat}" "${python}" "$@"
  else
    test_once "${python}" "$@"
  fi
}

main "$@"
