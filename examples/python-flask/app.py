"""A small Flask JSON API that does real work per request, served by gunicorn: an example for `run_bench.sh --app`.

GET /products?n=50 builds n products (deterministic from n), sorts them by price, hashes each one's
description with SHA-256 and answers them as JSON, the same bytes for the same request (wrkreport
checks every setup answers what the app alone answers). The same work as examples/go-json-api.
"""

from __future__ import annotations

import hashlib

from flask import Flask, Response, json, request

app = Flask(__name__)


def catalogue(n: int) -> list[dict]:
    """Return n products in price order, each with the SHA-256 of its description."""
    items = []
    for i in range(n):
        price = ((i * 7919) % 1000) / 10
        description = f"product {i}: a thing that costs {price:.2f} and ships in {i % 9 + 1} days"
        items.append({"id": i, "name": f"product-{i}", "price": price, "digest": hashlib.sha256(description.encode()).hexdigest()})
    return sorted(items, key=lambda item: item["price"])


@app.get("/products")
def products() -> Response:
    try:
        n = int(request.args.get("n", "50"))
    except ValueError:
        n = -1
    if not 0 <= n <= 10000:
        return Response("n must be 0-10000\n", status=400, mimetype="text/plain")
    body = json.dumps({"count": n, "products": catalogue(n)}, separators=(",", ":"))
    return Response(body, mimetype="application/json")
