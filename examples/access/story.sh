#!/bin/sh
# API access control end to end (seed 000), on the embedded store unless GAF_STORE says otherwise.
# Every step is idempotent: run it twice and nothing is written twice.
set -e
cd "$(dirname "$0")"
# A fresh install may not have put the gaf script on PATH yet (pyenv shims, --user installs).
command -v gaf > /dev/null 2>&1 || gaf() { python -m gaf "$@"; }
export GAF_STORE="${GAF_STORE:-../../.gaf/access.lbug}"
# Read one value out of gaf's --json output: the expression sees the JSON as d.
field() { python -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }
ingested='"{file}: {written} written, {existing} already stored".format(**d)'
MORNING=2026-03-02T09:30:00Z
# Close one request's question on a GAF and print its verdict in one line; sets CLOSURE and VERDICT.
decide() {
    closed=$(gaf close "$1" --rules api-access --subject "request:$2" --as-of "$3" --at "$3" --json)
    CLOSURE=$(echo "$closed" | field 'd["closure"]')
    VERDICT=$(echo "$closed" | field 'd["verdict"]["id"]')
    echo "$closed" | field '"request:'"$2"'  {label:13} {strength:+.3f}  interval [{low:+.3f}, {high:+.3f}]".format(**d["verdict"])'
}

echo "== 1. Five sources say what they know: the gateway's access log, the IP reputation feed, the network"
echo "==    inventory, the request counter, the customer database. The status page is quiet so far"
gaf ingest claims.yaml --json | field "$ingested"
gaf ingest authority.yaml --json | field "$ingested"
echo "== 2. The projection policy (where absence means 'no'), and the verdict rules of seed 000"
gaf policy add policy.yaml
gaf policy show api-access@1
gaf rules add verdict-rules.yaml
echo "== 3. Projection at 09:30: what is accepted, what is derived, what is left unknown"
projected=$(gaf project api-access@1 --reviewer security-desk --as-of $MORNING --json)
GAF1=$(echo "$projected" | field 'd["gaf"]')
echo "$projected" | field '"\n".join(["%s: %d facts accepted; derived:" % (d["gaf"], len(d["accepted"]))]
    + sorted("  " + a["proposition"] for a in d["accepted"] if a["by"].startswith("derivation:"))
    + ["unknown:"] + ["  " + p for p in d["unresolved"]])'
echo "== 4. One closure per request. 203.0.113.7 is in the range the feed declares complete, so 'not"
echo "==    listed' means 'not blocked': r-1001 is allowed. 198.51.100.23 is outside it: r-1002 is undetermined"
decide "$GAF1" r-1001 $MORNING; C1=$CLOSURE; V1=$VERDICT
decide "$GAF1" r-1002 $MORNING; C2=$CLOSURE; V2=$VERDICT
decide "$GAF1" r-1003 $MORNING
decide "$GAF1" r-1004 $MORNING; V4=$VERDICT
decide "$GAF1" r-1005 $MORNING
gaf verdict "$C2"
echo "== 5. What would settle r-1002? A bounded search of its cone (nothing is written)"
gaf whatif "$C2" --max-size 1
echo "== 6. Facts confer no power: the gateway acts under its grants, and only as the verdict permits"
GRANTS=$(gaf list grant --json)
grant() { echo "$GRANTS" | field "[g['id'] for g in d if g['action_kind'] == '$1'][0]"; }
gaf act "$V1" --kind serve --subject request:r-1001 --by api-gateway --grant "$(grant serve)" \
    --policy api-actions --key r-1001-serve --at 2026-03-02T09:30:01Z
gaf act "$V4" --kind reject --subject request:r-1004 --by api-gateway --grant "$(grant reject)" \
    --policy api-actions --key r-1004-reject --at 2026-03-02T09:30:01Z
gaf act "$V2" --kind serve --subject request:r-1002 --by api-gateway --grant "$(grant serve)" \
    --policy api-actions --key r-1002-serve --at 2026-03-02T09:30:01Z || echo "   (refused, as it should be)"
gaf act "$V2" --kind step-up --subject request:r-1002 --by api-gateway --grant "$(grant step-up)" \
    --policy api-actions --key r-1002-step-up --at 2026-03-02T09:30:01Z
echo "== 7. 09:35: the vendor looks 198.51.100.23 up: not listed. That explicit denial settles r-1002"
echo "==    (every closure on the 09:30 GAF is re-decided; only r-1002's label changes)"
gaf reopen new-claim lookup.yaml --reviewer security-desk --as-of 2026-03-02T09:40:00Z
gaf history request:r-1002
echo "== 8. 10:00: an incident is declared. At 10:15 erin, premium, calls again over the limit: the"
echo "==    incident defeats the premium exemption, and the rate limit holds"
gaf ingest incident.yaml --json | field "$ingested"
GAF2=$(gaf project api-access@1 --reviewer security-desk --as-of 2026-03-02T10:20:00Z --json | field 'd["gaf"]')
gaf close "$GAF2" --rules api-access --subject request:r-1006 --as-of 2026-03-02T10:20:00Z --at 2026-03-02T10:20:00Z
echo "== 9. 11:00: the feed lists 203.0.113.7. The claim falls into the closed scope r-1001's 'allow'"
echo "==    relied on: a negative dependency, found before anything is re-decided"
gaf impact new-claim feed-update.yaml --json | field '"closed scopes hit: %s\nrelied on their absence: %d closure(s), %d verdict(s); executed actions to review: %d" % (
    ", ".join(s[:24] + "…" for s in d["trigger"]["scopes"]),
    sum(a["kind"] == "closure" and a["reason"] == "negative" for a in d["affected"]),
    sum(a["kind"] == "verdict" and a["reason"] == "negative" for a in d["affected"]), len(d["to_compensate"]))'
gaf reopen new-claim feed-update.yaml --reviewer security-desk --as-of 2026-03-02T11:05:00Z
echo "== 10. The old 'allow' cannot be acted on again; the new 'deny' lets the gateway revoke the session"
gaf act "$V1" --kind serve --subject request:r-1001 --by api-gateway --grant "$(grant serve)" \
    --policy api-actions --key r-1001-serve-again --at 2026-03-02T11:06:00Z || echo "   (refused, as it should be)"
V1_NOW=$(gaf verdict "$(gaf history request:r-1001 --json | field 'd[-1]["closure"]')" --json | field 'd["id"]')
gaf act "$V1_NOW" --kind revoke-session --subject request:r-1001 --by api-gateway \
    --grant "$(grant revoke-session)" --policy api-actions --key r-1001-revoke --at 2026-03-02T11:06:00Z
echo "== 11. The history of r-1001: every closure stays readable, and each replays identically"
gaf history request:r-1001
for c in $(gaf history request:r-1001 --json | field '" ".join(h["closure"] for h in d)'); do gaf replay "$c"; done
echo "== 12. Where the day stands, as an auditor asks it: the standing verdict on each request"
gaf query --cypher "MATCH (c:Closure)<-[:DECIDES]-(v:Verdict) OPTIONAL MATCH (n:Closure)-[:SUPERSEDES]->(c)
    WITH c, v, count(n) AS later WHERE later = 0
    RETURN c.subject AS request, v.label AS verdict, v.strength AS strength ORDER BY request"
