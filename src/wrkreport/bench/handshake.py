"""TLS at run time: the manifest's `tls` record, one handshake's report per setup, and the servers' resumed-connection counters."""

from __future__ import annotations

import re
import socket
import subprocess
from pathlib import Path

from ..core.errors import UsageError
from ..core.setups import SETUP_BY_ID
from .manifest import load_manifest, save_manifest

# openssl s_client -brief's lines (OpenSSL 3.0): "Protocol version: TLSv1.3",
# "Ciphersuite: TLS_AES_128_GCM_SHA256", "Signature type: ECDSA", "Server Temp Key: X25519, 253 bits".
PROBE_LINES = {
    "protocol": re.compile(r"^Protocol version: (?P<value>\S+)\s*$", re.M),
    "cipher": re.compile(r"^Ciphersuite: (?P<value>\S+)\s*$", re.M),
    "signature": re.compile(r"^Signature type: (?P<value>\S+)\s*$", re.M),
    "group": re.compile(r"^(?:Server|Peer) Temp Key: (?P<value>[^,\n]+)", re.M),
    # -brief says nothing of ALPN: for an h2 setup the driver adds the full report's line
    # ("ALPN protocol: h2", or "No ALPN negotiated": None) of a second handshake offering h2.
    "alpn": re.compile(r"^ALPN protocol: (?P<value>\S+)\s*$", re.M),
}
COMPARED = ("protocol", "cipher", "group", "signature")  # what every TLS setup must have negotiated alike
# Who counts a TLS setup's connections (the manifest's tls.counters; where is not recorded:
# a socket or log in the private work dir, passed to each measure as --tls-counter KIND:PATH).
COUNTER_KINDS = {
    "socket": "gohello: handshakes and resumed connections (crypto/tls ConnectionState.DidResume)",
    "size": "nginx: resumed connections ($ssl_session_reused, logged per connection)",
}
COUNTER_LINE = re.compile(r"handshakes (?P<handshakes>[0-9]+) resumed (?P<resumed>[0-9]+)\n?")


def parse_probe(text: str) -> dict:
    """Return what one handshake negotiated from `openssl s_client -brief`'s output; None for what it did not say.

    >>> parse_probe("CONNECTION ESTABLISHED\\nProtocol version: TLSv1.3\\nCiphersuite: TLS_AES_128_GCM_SHA256\\nSignature type: ECDSA\\nServer Temp Key: X25519, 253 bits\\n")
    {'protocol': 'TLSv1.3', 'cipher': 'TLS_AES_128_GCM_SHA256', 'signature': 'ECDSA', 'group': 'X25519', 'alpn': None, 'error': None}
    """
    found = {name: (m["value"].strip() if (m := line.search(text)) else None) for name, line in PROBE_LINES.items()}
    error = None
    if "CONNECTION ESTABLISHED" not in text or found["protocol"] is None:
        last = [line for line in text.splitlines() if line.strip()][-1:] or ["no output"]
        error = f"no TLS handshake: {last[0][:200]}"
    return {**found, "error": error}


def differences(probe: dict, reference: dict) -> list[str]:
    """Return 'cipher TLS_AES_256_GCM_SHA384 (go-https: TLS_AES_128_GCM_SHA256)'-like texts for each compared value that differs."""
    return [
        f"{key} {probe.get(key)} ({reference['setup']}: {reference.get(key)})" for key in COMPARED if probe.get(key) != reference.get(key)
    ]


def cert_fingerprint(cert: Path) -> str:
    """Return the certificate's SHA-256 fingerprint as openssl prints it (AB:CD:...)."""
    out = subprocess.run(
        ["openssl", "x509", "-noout", "-fingerprint", "-sha256", "-in", str(cert)], capture_output=True, text=True, check=False
    )
    if out.returncode != 0 or "=" not in out.stdout:
        raise UsageError(f"openssl could not read the run's certificate {cert}: {out.stderr.strip()[:200]}")
    return out.stdout.strip().split("=", 1)[1]


def cert_key(cert: Path) -> str:
    """Return the certificate's public key as openssl names it, e.g. 'id-ecPublicKey 256 bit (prime256v1)'."""
    out = subprocess.run(["openssl", "x509", "-noout", "-text", "-in", str(cert)], capture_output=True, text=True, check=False).stdout
    algorithm = re.search(r"Public Key Algorithm: (\S+)", out)
    size = re.search(r"Public-Key: \((\d+) bit\)", out)
    curve = re.search(r"NIST CURVE: (\S+)|ASN1 OID: (\S+)", out)
    parts = [algorithm[1] if algorithm else "unknown", f"{size[1]} bit" if size else ""]
    if curve:
        parts.append(f"({curve[1] or curve[2]})")
    return " ".join(p for p in parts if p)


NGINX_OPENSSL = re.compile(r"built with (OpenSSL [^\s(]+)[^\n]*?(?:\(running with (OpenSSL [^\s)]+))?")


def cmd_tls_record(args) -> int:
    """Record the run's TLS: key type, the certificate's fingerprint and key, versions, and where each setup's resumptions are counted."""
    run_dir = Path(args.run)
    manifest = load_manifest(run_dir)
    params = manifest["parameters"]
    counters = {}
    for setup, kind in args.counter or []:
        if setup not in SETUP_BY_ID or kind not in COUNTER_KINDS:
            raise UsageError(f"--counter {setup} {kind}: expected a TLS setup and one of {', '.join(COUNTER_KINDS)}")
        counters[setup] = COUNTER_KINDS[kind]
    nginx_ssl = NGINX_OPENSSL.search(manifest.get("nginx_V") or "")
    manifest["tls"] = {
        "key": params.get("tls_key"),
        "version": params.get("tls_version"),
        "resumption": params.get("tls_resumption"),
        "cipher": params.get("tls_cipher"),
        "group": params.get("tls_group"),
        "cert_sha256": cert_fingerprint(Path(args.cert)),
        "cert_key": cert_key(Path(args.cert)),
        "openssl": args.openssl,
        "nginx_openssl": (nginx_ssl[2] or nginx_ssl[1]) if nginx_ssl else None,
        "go": manifest.get("versions", {}).get("go"),
        "counters": counters,
        "setups": {},
    }
    save_manifest(run_dir, manifest)
    return 0


def record_probe(manifest: dict, entry: dict, setup: str, file: str) -> str | None:
    """Record one handshake's report in the pass's cell and, the first time, in the manifest's `tls.setups`; return a note when it differs from go-https (or the first TLS setup recorded)."""
    text = Path(file).read_text(errors="replace") if file and Path(file).is_file() else ""
    probe = parse_probe(text)
    tls = manifest.setdefault("tls", {"setups": {}})
    tls.setdefault("setups", {}).setdefault(setup, probe)
    entry["cells"].setdefault(setup, {})["tls"] = probe
    if probe["error"]:
        return probe["error"]
    recorded = tls["setups"]
    reference_setup = "go-https" if "go-https" in recorded and setup != "go-https" else next((s for s in recorded if s != setup), None)
    if reference_setup is None or recorded[reference_setup].get("error"):
        return None
    found = differences(probe, {**recorded[reference_setup], "setup": reference_setup})
    return f"negotiated {', '.join(found)}" if found else None


SIZE_LINE = re.compile(r"size\s+(?P<bytes>[0-9]+)\s*")


def remote_counter(spec: str | None, ask) -> dict | None:
    """Return read_counter's answer from the target (--server-host): ask('count KIND PATH') runs server_machine.sh's reader there.

    >>> remote_counter("size:/t/tls-resumed.nginx-https.log", lambda line: ["size 14"])
    {'handshakes': None, 'resumed': 7}
    >>> remote_counter("socket:/t/gotls.sock", lambda line: ["handshakes 100 resumed 3"])
    {'handshakes': 100, 'resumed': 3}
    >>> remote_counter("socket:/t/gotls.sock", lambda line: []) is None  # gohello gone
    True
    """
    if not spec:
        return None
    kind, _, path = spec.partition(":")
    text = "\n".join(ask(f"count {kind} {path}"))
    if kind == "size":
        match = SIZE_LINE.fullmatch(text)
        return {"handshakes": None, "resumed": int(match["bytes"]) // 2} if match else None
    match = COUNTER_LINE.fullmatch(text)
    return {"handshakes": int(match["handshakes"]), "resumed": int(match["resumed"])} if match else None


def read_counter(spec: str | None) -> dict | None:
    """Return a server's TLS counts now: gohello's socket gives handshakes and resumed; nginx's log (2 bytes a resumed connection) resumed only.

    None when there is no counter or it cannot be read (the server has gone).
    """
    if not spec:
        return None
    kind, _, path = spec.partition(":")
    if kind == "size":
        try:
            return {"handshakes": None, "resumed": Path(path).stat().st_size // 2}
        except FileNotFoundError:
            return {"handshakes": None, "resumed": 0}  # nginx opens it at start; nothing resumed, nothing written
        except OSError:
            return None
    try:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.settimeout(2)
            conn.connect(path)
            data = b""
            while chunk := conn.recv(200):
                data += chunk
    except OSError:
        return None
    match = COUNTER_LINE.fullmatch(data.decode("ascii", errors="replace"))
    return {"handshakes": int(match["handshakes"]), "resumed": int(match["resumed"])} if match else None


def counted(before: dict | None, after: dict | None) -> dict | None:
    """Return the counts of one measurement (after - before), None when either reading is missing."""
    if before is None or after is None:
        return None
    return {
        key: (after[key] - before[key] if after[key] is not None and before[key] is not None else None) for key in ("handshakes", "resumed")
    }
