"""TLS in the plan: --tls-key, --tls-version, --tls-resumption, --connection-per-request, and nginx's TLS directives."""

from __future__ import annotations

import argparse

from ..core.display import argument
from ..core.errors import UsageError
from ..core.setups import SETUP_BY_ID
from .profiles import (
    ENV_CONNECTION_PER_REQUEST,
    ENV_TLS_KEY,
    ENV_TLS_RESUMPTION,
    ENV_TLS_VERSION,
    TLS_CIPHERS,
    TLS_GROUP_NAME,
    TLS_KEYS,
    TLS_VERSIONS,
)
from .values import parse_switch

RESUMPTION_WORDS = {"off": False, "on": True}


def tls_options(parser: argparse.ArgumentParser) -> None:
    """Add the TLS options and --connection-per-request to run_bench.sh's parser."""
    parser.add_argument("--tls-key")
    parser.add_argument("--tls-version")
    parser.add_argument("--tls-resumption")
    parser.add_argument("--connection-per-request", action="store_true")


def choice(given: str | None, option: str, env: dict[str, str], name: str, choices) -> str | None:
    """Return an option's value (else its variable's), refusing anything not in choices; None when neither is set."""
    text, source = (given, option) if given is not None else (env.get(name), name)
    if text is None:
        return None
    if text not in choices:
        raise UsageError(f"{source} {argument(text)}: choose one of {', '.join(choices)}")
    return text


def tls_plan(args: argparse.Namespace, env: dict[str, str], plan: dict) -> dict:
    """Return connection_per_request, tls_key, tls_key_args, tls_version, tls_resumption and tls_cipher.

    The TLS values are those of the run's TLS setups; without one they are recorded anyway
    (defaults), and a TLS option given without a TLS setup is a warning.
    """
    if args.connection_per_request:
        per_request = True
    else:
        text = env.get(ENV_CONNECTION_PER_REQUEST)
        per_request = False if text is None else parse_switch(text, ENV_CONNECTION_PER_REQUEST)
    key = choice(args.tls_key, "--tls-key", env, ENV_TLS_KEY, TLS_KEYS)
    version = choice(args.tls_version, "--tls-version", env, ENV_TLS_VERSION, TLS_VERSIONS)
    resumption = choice(args.tls_resumption, "--tls-resumption", env, ENV_TLS_RESUMPTION, RESUMPTION_WORDS)
    if not any(SETUP_BY_ID[s].tls for s in plan["setups"]) and (key or version or resumption):
        plan["warnings"].append("--tls-key, --tls-version and --tls-resumption apply to TLS setups only (--setups tls); none is chosen")
    if plan["load_generator"] == "ab" and any(SETUP_BY_ID[s].tls for s in plan["setups"]):
        raise UsageError("the TLS setups are measured with wrk; ApacheBench (--load-generator ab) is not supported for them")
    if plan["load_generator"] == "ab" and per_request:
        # ab without -k speaks HTTP/1.0: Go answers it without a Connection header, nginx with
        # "Connection: close", so every nginx measurement would fail the same-response check.
        raise UsageError(
            "--connection-per-request needs wrk: ApacheBench sends HTTP/1.0 without keep-alive, "
            "which Go and nginx answer with different headers (19 bytes apart)"
        )
    if per_request and any(SETUP_BY_ID[s].new_connection for s in plan["setups"]):
        plan["warnings"].append(
            "--connection-per-request gives every setup a new connection per request, so the -new setups "
            "measure what their servers' setups do (--setups tls measures both modes without it)"
        )
    key, version = key or "ecdsa-p256", version or "1.3"
    return {
        "connection_per_request": per_request,
        "tls_key": key,
        "tls_key_args": list(TLS_KEYS[key]),
        "tls_version": version,
        "tls_resumption": RESUMPTION_WORDS[resumption or "off"],
        "tls_cipher": TLS_CIPHERS[version, key],
        "tls_group": TLS_GROUP_NAME,
    }


def tls_parameters(plan: dict) -> dict:
    """Return the TLS keys of the manifest's parameters."""
    return {key: plan[key] for key in ("connection_per_request", "tls_key", "tls_version", "tls_resumption", "tls_cipher", "tls_group")}


def nginx_tls_values(parameters: dict, tls_dir: str) -> dict[str, str]:
    """Return the template's TLS values: the certificate and key paths and the ssl_* directives matching gohello's flags.

    nginx 1.22's default ssl_protocols has no TLS 1.3, so the version is always set; the
    TLS 1.3 suite is set with ssl_conf_command (ssl_ciphers covers TLS 1.2 only).
    """
    version = parameters.get("tls_version", "1.3")
    cipher = parameters.get("tls_cipher") or TLS_CIPHERS[version, parameters.get("tls_key", "ecdsa-p256")]
    lines = [f"ssl_protocols TLSv{version};", f"ssl_ecdh_curve {parameters.get('tls_group', TLS_GROUP_NAME)};"]
    lines.append(f"ssl_conf_command Ciphersuites {cipher};" if version == "1.3" else f"ssl_ciphers {cipher};")
    if parameters.get("tls_resumption"):
        lines += ["ssl_session_cache shared:TLS:10m;", "ssl_session_tickets on;"]
    else:
        lines += ["ssl_session_cache off;", "ssl_session_tickets off;"]
    return {
        "tls_cert": f"{tls_dir}/cert.pem",
        "tls_key": f"{tls_dir}/key.pem",
        "tls_directives": "\n".join(f"        {line}" for line in lines),
    }
