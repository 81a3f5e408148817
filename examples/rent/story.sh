#!/bin/sh
# The rent case end to end (SPEC.md §12), on the embedded store unless GAF_STORE says otherwise.
# Every step is idempotent: run it twice and nothing is written twice.
set -e
cd "$(dirname "$0")"
export GAF_STORE="${GAF_STORE:-../../.gaf/rent.lbug}"
field() { python -c "import json,sys; print(json.load(sys.stdin)$1)"; }

echo "== 1. Four claims about July's rent (A landlord, B tenant, C bank ledger, D contract)"
gaf ingest claims.yaml
echo "== 2. The projection policy (has July been paid?) and the verdict rules"
gaf policy add policy.yaml
gaf rules add verdict-rules.yaml
echo "== 3. Projection on 15 July: contract and payment accepted, allocation unknown, delinquency not derived"
gaf project rent-delinquency --reviewer registry-clerk --as-of 2026-07-15
GAF1=$(gaf project rent-delinquency --reviewer registry-clerk --as-of 2026-07-15 --json | field '["gaf"]')
echo "== 4. Closure and verdict: undetermined, and the trace names the allocation that would settle it"
CLOSURE1=$(gaf close "$GAF1" --rules rent-paid --subject rent:lease-17/2026-07 --as-of 2026-07-15 --json | field '["closure"]')
gaf verdict "$CLOSURE1"
echo "== 5. Later claim E: the original transfer receipt, memo 'July rent'"
gaf ingest claim-e.yaml
echo "== 6. Projection on 21 July: the allocation is accepted and 'paid' is derived"
GAF2=$(gaf project rent-delinquency --reviewer registry-clerk --as-of 2026-07-21 --json | field '["gaf"]')
echo "== 7. A new closure supersedes the first: verdict paid; the first stays readable"
CLOSURE2=$(gaf close "$GAF2" --rules rent-paid --subject rent:lease-17/2026-07 --as-of 2026-07-21 --supersedes "$CLOSURE1" --json | field '["closure"]')
gaf verdict "$CLOSURE2"
gaf verdict "$CLOSURE1" --json | field '["label"]'
echo "== 8. Replay recomputes both from the stored inputs"
gaf replay "$CLOSURE1"
gaf replay "$CLOSURE2"
