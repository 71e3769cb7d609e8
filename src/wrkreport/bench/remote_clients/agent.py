"""Remote clients' agent: the POSIX sh that runs on each client (the agent reading one line per measurement, its stop, cleanup and RTT scripts)."""

from __future__ import annotations

import re
import shlex

HIST_ENV = "WRKREPORT_HIST_FILE"  # read by histogram.lua's done()
RTT_SAMPLES = 10
RTT_PORT = 22  # a TCP connect's SYN -> SYN-ACK (or RST when nothing listens) is one round trip
STOP_WAIT_S = 3.0  # how long the stop script waits for a wrk to exit after SIGTERM
GENERATORS = ("wrk", "vegeta")  # the only processes stop and down scripts kill by a recorded PID (its /proc/PID/comm)
AGENT = "wrkreport-agent"  # the first line of agent_script: how down_script knows an agent's PID is still one
RECORD = b"\x1ewrkreport-record\n"  # after wrk's stdout: the agent's record, then an RS line, then the histogram
READY = b"wrkreport-client-ready\n"  # an agent's line for a run: waiting for the start line
STDERR_MARK = b"\x1ewrkreport-stderr\n"  # after the histogram: wrk's stderr
END_MARK = re.compile(rb"\x1ewrkreport-end (-?[0-9]+)\n")  # the last line of an answer: wrk's exit status


def mkdir_script() -> str:
    """Return the script making the client's private work dir; it prints the dir."""
    return 'umask 077 && mktemp -d "${TMPDIR:-/tmp}/wrkreport-client.XXXXXX"'


def agent_script(workdir: str) -> str:
    """Return the agent kept running on a client for the whole run: one `run NAME HIST WRK ARGS...` line per wrk run.

    It reads its input with the `read` builtin only, from fd 3 (a pipe is read byte by
    byte, so a start line is never taken from the next command; everything else it starts
    gets /dev/null). A `run` line is sh words (sh_words), evaluated as a call of `run`:
    say READY, wait for the start line (`go`; anything else or end of input means stop),
    then run wrk: PID in NAME.pid (stop_script kills it), NAME.stop seen
    before and right after the PID is written, its CPU by `times` around it, stdout and
    stderr in files. The answer: wrk's stdout, RECORD and the record, RS, the histogram,
    STDERR_MARK and wrk's stderr, then the end marker with the exit status (a stopped run:
    the end marker alone). HIST `v` runs vegeta (the command's first word; stdout its binary
    results): the answer's first part is then `vegeta encode --to csv` of them (when it
    exited 0), text, made after its CPU time and end were taken, a failed encoding said
    after its stderr. Its PID
    is in agent.PID.pid, so down_script can end an agent left reading a session the link lost.
    """
    return f"""# {AGENT}
cd {shlex.quote(workdir)} || exit 125
exec 3<&0 </dev/null
echo $$ > agent.$$.pid
trap 'rm -f agent.$$.pid' EXIT
NL='
'
run() {{
  n=$1 h=$2
  shift 2
  s=143
  if [ ! -e "$n.stop" ]; then
    echo {READY.decode().strip()}
    IFS= read -r go <&3 || go=
    if [ "$go" = go ] && [ ! -e "$n.stop" ]; then
      a=$(date -u +%s%3N 2>/dev/null)
      times > "$n.t0"
      if [ "$h" = 1 ]; then
        {HIST_ENV}="$PWD/$n.hist.json" "$@" > "$n.out" 2> "$n.err" 3<&- &
      else
        "$@" > "$n.out" 2> "$n.err" 3<&- &
      fi
      w=$!
      echo "$w" > "$n.pid"
      [ -e "$n.stop" ] && kill -TERM "$w"
      wait "$w"
      s=$?
      times > "$n.t1"
      b=$(date -u +%s%3N 2>/dev/null)
      e=0
      if [ "$h" = v ]; then
        [ "$s" = 0 ] && {{ "$1" encode --to csv "$n.out" 2>> "$n.err" 3<&-; e=$?; }}
      else
        cat "$n.out"
      fi
      printf '\\036wrkreport-record\\nstarted_ms %s\\nended_ms %s\\nstatus %s\\n' "$a" "$b" "$s"
      printf 't0 '; tr '\\n' ' ' < "$n.t0"; echo
      printf 't1 '; tr '\\n' ' ' < "$n.t1"; echo
      printf '\\036\\n'
      [ "$h" = 1 ] && cat "$n.hist.json" 2>/dev/null
      printf '\\036wrkreport-stderr\\n'
      [ "$h" = v ] && [ "$e" != 0 ] && echo "vegeta encode exit $e"
      cat "$n.err"
    fi
  fi
  rm -f -- "$n".*
  printf '\\036wrkreport-end %s\\n' "$s"
}}
while IFS= read -r line <&3; do
  case $line in
    'run '*) eval "$line" ;;
  esac
done
"""


def sh_words(words: list[str]) -> str:
    """Return words as one line of sh words for the agent's eval: ['a b', "it's"] -> 'a b' 'it'"'"'s' (a newline becomes "$NL")."""
    return " ".join(shlex.quote(word).replace("\n", "'\"$NL\"'") for word in words)


def kill_lines(pid_file: str) -> str:
    """Return sh lines sending SIGTERM to the load generator whose PID is in pid_file (if it still is wrk or vegeta), then waiting for it."""
    f = pid_file
    return (
        f"p=$(cat {f} 2>/dev/null)\n"
        "case \"$p\" in ''|*[!0-9]*) p= ;; esac\n"
        f"if [ -n \"$p\" ] && case \"$(cat /proc/$p/comm 2>/dev/null)\" in {'|'.join(GENERATORS)}) true ;; *) false ;; esac; then\n"
        "  kill -TERM \"$p\" 2>/dev/null\n"
        f"  i=0; while [ -e /proc/$p ] && [ $i -lt {int(STOP_WAIT_S * 10)} ]; do sleep 0.1; i=$((i + 1)); done\n"
        "  [ -e /proc/$p ] && kill -KILL \"$p\" 2>/dev/null\n"
        "fi\n"
    )


def stop_script(workdir: str, name: str) -> str:
    """Return the script stopping the wrk run as NAME (or keeping it from starting)."""
    n = shlex.quote(name)
    return f"cd {shlex.quote(workdir)} 2>/dev/null || exit 0\n: > {n}.stop\n" + kill_lines(f"{n}.pid") + "exit 0\n"


def down_script(workdir: str) -> str:
    """Return the script stopping every wrk recorded in workdir, then any agent left there (a lost session's waits for hours), then removing it."""
    d = shlex.quote(workdir)
    return (
        f'cd {d} 2>/dev/null || exit 0\nfor f in *.pid; do\n  [ -f "$f" ] || continue\n  case $f in agent.*) continue ;; esac\n'
        '  : > "${f%.pid}.stop"\n'
        + "".join("  " + line + "\n" for line in kill_lines('"$f"').splitlines())
        + 'done\nfor f in agent.*.pid; do\n  [ -f "$f" ] || continue\n  p=$(cat "$f" 2>/dev/null)\n'
        "  case \"$p\" in ''|*[!0-9]*) continue ;; esac\n"
        f"  tr '\\0' ' ' < /proc/$p/cmdline 2>/dev/null | grep -q {AGENT} && kill -TERM \"$p\" 2>/dev/null && kill -CONT \"$p\" 2>/dev/null\n"
        f"done\ncd / && rm -rf -- {d}\n"
    )


RTT_PY = r"""
import socket, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n + 1):  # the first is not counted: it may include resolving the neighbour's link address
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    t = time.perf_counter()
    try:
        s.connect((host, port))
    except ConnectionRefusedError:
        pass
    except OSError as e:
        print("error", e); sys.exit(0)
    finally:
        s.close()
    i and print("ms", (time.perf_counter() - t) * 1000)
    time.sleep(0.05)
"""


def rtt_script(address: str) -> str:
    """Return the script timing RTT_SAMPLES round trips from a client to address (after one not counted): python3's TCP connect, else ping."""
    a = shlex.quote(address)
    return (
        f"if command -v python3 >/dev/null 2>&1; then echo method python3; python3 -c {shlex.quote(RTT_PY)} {a} {RTT_PORT} {RTT_SAMPLES}\n"
        f"elif command -v ping >/dev/null 2>&1; then echo method ping; ping -n -c {RTT_SAMPLES + 1} -i 0.2 {a} 2>&1 | sed -n 's/.*time=\\([0-9.]*\\) ms.*/ms \\1/p' | tail -n +2\n"
        "else echo method none; fi\n"
    )
