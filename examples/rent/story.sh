#!/bin/sh
# The rent case end to end (SPEC.md §12), on the embedded store unless GAF_STORE says otherwise.
# Every step is idempotent: run it twice and nothing is written twice.
set -e
cd "$(dirname "$0")"
export GAF_STORE="${GAF_STORE:-../../.gaf/rent.lbug}"

echo "== 1. Four claims about July's rent (A landlord, B tenant, C bank ledger, D contract)"
gaf ingest claims.yaml
echo "== 2. The projection policy: has July delinquency been established?"
gaf policy add policy.yaml
echo "== 3. Projection on 15 July: contract and payment accepted, allocation unknown, delinquency not derived"
gaf project rent-delinquency --reviewer registry-clerk --as-of 2026-07-15
echo "== 4. Later claim E: the original transfer receipt, memo 'July rent'"
gaf ingest claim-e.yaml
echo "== 5. Projection on 21 July: the allocation is accepted and 'paid' is derived"
gaf project rent-delinquency --reviewer registry-clerk --as-of 2026-07-21
