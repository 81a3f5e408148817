#!/bin/sh
# The rent case end to end (SPEC.md §12), on the embedded store unless GAF_STORE says otherwise.
# Every step is idempotent: run it twice and nothing is written twice.
set -e
cd "$(dirname "$0")"
# A fresh install may not have put the gaf script on PATH yet (pyenv shims, --user installs).
command -v gaf > /dev/null 2>&1 || gaf() { python -m gaf "$@"; }
export GAF_STORE="${GAF_STORE:-../../.gaf/rent.lbug}"
REPORTS="$(dirname "$GAF_STORE")"
mkdir -p "$REPORTS"
# Read one value out of gaf's --json output: the expression sees the JSON as d.
field() { python -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }
JULY=rent:lease-17/2026-07

echo "== 1. Four claims about July's rent (A landlord, B tenant, C bank ledger, D contract), and who may act"
gaf ingest claims.yaml --at 2026-07-12T09:00:00Z
gaf ingest authority.yaml --at 2026-07-12T09:00:00Z > /dev/null
echo "== 2. The projection policy and the verdict rules"
gaf policy add policy.yaml --at 2026-07-14
gaf rules add verdict-rules.yaml --at 2026-07-14
echo "== 3. Projection on 15 July: contract and payment accepted, allocation unknown, delinquency not derived"
gaf project rent-delinquency@1 --reviewer registry-clerk --as-of 2026-07-15 --at 2026-07-15T09:00:00Z
GAF1=$(gaf project rent-delinquency@1 --reviewer registry-clerk --as-of 2026-07-15 --at 2026-07-15T09:00:00Z --json | field 'd["gaf"]')
echo "== 4. Closure and verdict: undetermined; the trace names the allocation that would settle it"
CLOSURE1=$(gaf close "$GAF1" --rules rent-paid --subject $JULY --as-of 2026-07-15 --at 2026-07-15T12:00:00Z --json | field 'd["closure"]')
gaf verdict "$CLOSURE1"
VERDICT1=$(gaf verdict "$CLOSURE1" --json | field 'd["id"]')
echo "== 5. The authorised action is a request to establish the allocation, not a collection letter"
REQUEST_GRANT=$(gaf list grant --json | field '[g["id"] for g in d if g["action_kind"] == "request-allocation"][0]')
LETTER_GRANT=$(gaf list grant --json | field '[g["id"] for g in d if g["action_kind"] == "collection-letter"][0]')
gaf act "$VERDICT1" --kind request-allocation --subject $JULY --by letting-agent --grant "$REQUEST_GRANT" \
    --policy rent-actions --key july-allocation-request --at 2026-07-16
gaf act "$VERDICT1" --kind collection-letter --subject $JULY --by letting-agent --grant "$LETTER_GRANT" \
    --policy rent-actions --key july-letter --amount 1000 --at 2026-07-16 || echo "   (refused, as it should be)"
echo "== 6. Claim E arrives (the transfer receipt, memo 'July rent'): reopen what it reaches"
gaf reopen new-claim claim-e.yaml --reviewer registry-clerk --as-of 2026-07-21 --at 2026-07-21T09:00:00Z
echo "== 7. The history of July: the first closure stays readable, superseded by the second"
gaf history $JULY
echo "== 8. Replay recomputes each closure from the stored inputs"
for c in $(gaf history $JULY --json | field '" ".join(h["closure"] for h in d)'); do gaf replay "$c"; done
echo "== 9. What rests on the bank ledger? (impact report with a picture: $REPORTS/impact.html)"
gaf impact source bank-ledger --html "$REPORTS/impact.html" --json | field 'd["totals"]'
echo "== 10. The letting agent generalises the July case into a policy, and ratifies it from 1 August"
CANDIDATE=$(gaf policy propose allocation-rule.yaml --name rent-allocation --by letting-agent --at 2026-07-25 --json \
    --text "A payment from the tenant's registered account, by the due date, equal to the rent, with no other debt open, is allocated to the current month's rent." \
    | field 'd["id"]')
gaf policy ratify "$CANDIDATE" --by letting-agent --version 1 --effective 2026-08-01 --at 2026-07-28
echo "== 11. Sway before adopting it: what would it do to the decisions already taken?"
gaf policy sway rent-delinquency@1 policy-v2.yaml
gaf policy revise policy-v2.yaml --at 2026-07-31
echo "== 12. August: a matching payment is paid under the ratified policy, without asking the landlord"
gaf ingest august.yaml --at 2026-08-05T09:00:00Z > /dev/null
GAF3=$(gaf project rent-delinquency@2 --reviewer registry-clerk --as-of 2026-08-06 --at 2026-08-06T09:00:00Z --json | field 'd["gaf"]')
gaf close "$GAF3" --rules rent-paid --subject rent:lease-17/2026-08 --as-of 2026-08-06 --at 2026-08-06T12:00:00Z
echo "== 13. September: 900 instead of 1000 is outside the policy: a policy exception, queued for a person"
gaf ingest september.yaml --at 2026-09-04T09:00:00Z > /dev/null
GAF4=$(gaf project rent-delinquency@2 --reviewer registry-clerk --as-of 2026-09-06 --at 2026-09-06T09:00:00Z --json | field 'd["gaf"]')
gaf close "$GAF4" --rules rent-paid --subject rent:lease-17/2026-09 --as-of 2026-09-06 --at 2026-09-06T12:00:00Z
gaf policy queue
