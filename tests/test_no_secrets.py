"""No secret in the repository: credentials and keys come from the environment, never from a tracked file."""

from __future__ import annotations

import re
import subprocess

from tests.conftest import ROOT

#: What a committed secret looks like: private keys, cloud and forge tokens, a password
#: written into Neo4j's auth setting, a signing key written out in full.
SECRETS = {
    "a private key": re.compile(r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED )?PRIVATE KEY-----"),
    "an AWS access key": re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    "a GitHub token": re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    "a Neo4j password in NEO4J_AUTH": re.compile(r"NEO4J_AUTH\s*[:=]\s*[\"']?neo4j/(?!\$\{)[^\s\"']+"),
    "a signing key": re.compile(r"GAF_SIGNING_KEY\s*=\s*[\"']?[0-9a-fA-F]{64}\b"),
}


def test_no_tracked_file_holds_a_secret():
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    found = []
    for name in filter(None, files):
        path = ROOT / name.decode()
        if not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        text = path.read_bytes().decode("utf-8", errors="ignore")
        found += [f"{name.decode()}: {what}" for what, pattern in SECRETS.items() if pattern.search(text)]
    assert not found, found
    assert not any(n.startswith(b".neo4j/") or n.endswith(b"/password") for n in files)
