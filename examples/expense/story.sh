#!/bin/sh
# A travel-expense claim end to end, on the embedded store unless GAF_STORE says otherwise:
# receipts and a card statement against a per-diem × the trip's length, the traveller's own
# word set aside as a party's, a partial reimbursement, a late card line that reopens the
# case, and a top-up that pays only the balance. Every step is idempotent.
set -e
cd "$(dirname "$0")"
command -v gaf > /dev/null 2>&1 || gaf() { python -m gaf "$@"; }
export GAF_STORE="${GAF_STORE:-../../.gaf/expense.lbug}"
mkdir -p "$(dirname "$GAF_STORE")"
field() { python -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }
TRIP=expense:trip-42

echo "== 1. The booking, the card statement, the receipts and the traveller's note; who may pay"
gaf ingest claims.yaml
gaf ingest authority.yaml > /dev/null
gaf policy add policy.yaml
gaf rules add verdict-rules.yaml
echo "== 2. Projection on 5 August: two card lines, 107.50 EUR against 3 days × 40 EUR"
gaf project travel-expenses@1 --reviewer finance-desk --as-of 2026-08-05
GAF1=$(gaf project travel-expenses@1 --reviewer finance-desk --as-of 2026-08-05 --json | field 'd["gaf"]')
echo "== 3. Closure and verdict"
CLOSURE1=$(gaf close "$GAF1" --rules reimburse-trip --subject $TRIP --as-of 2026-08-05 --at 2026-08-05 --json | field 'd["closure"]')
gaf verdict "$CLOSURE1"
VERDICT1=$(gaf verdict "$CLOSURE1" --json | field 'd["id"]')
GRANT=$(gaf list grant --json | field '[g["id"] for g in d if g["action_kind"] == "reimburse"][0]')
echo "== 4. A partial reimbursement of 80 EUR; then asking for the full 107.50 is refused: only the balance is left"
FIRST=$(gaf act "$VERDICT1" --kind reimburse --subject $TRIP --by finance-desk --grant "$GRANT" --policy expense-actions \
    --key trip-42-part --amount 80 --unit EUR --at 2026-08-06 --json | field 'd["action"]["id"]')
echo "   paid: $FIRST"
gaf act "$VERDICT1" --kind reimburse --subject $TRIP --by finance-desk --grant "$GRANT" --policy expense-actions \
    --key trip-42-full --amount 107.50 --unit EUR --at 2026-08-06 || echo "   (refused, as it should be)"
echo "== 5. A taxi posted late on the card (10 August): reopen what it reaches"
gaf reopen new-claim late-line.yaml --reviewer finance-desk --as-of 2026-08-11
CLOSURE2=$(gaf history $TRIP --json | field 'd[-1]["closure"]')
gaf verdict "$CLOSURE2"
VERDICT2=$(gaf verdict "$CLOSURE2" --json | field 'd["id"]')
echo "== 6. The top-up pays the balance — 117.50 EUR less the 80 already paid — and names the payment it completes"
gaf act "$VERDICT2" --kind reimburse --subject $TRIP --by finance-desk --grant "$GRANT" --policy expense-actions \
    --key trip-42-top-up --tops-up "$FIRST" --at 2026-08-12 --json \
    | field '"   " + d["status"]["status"] + ": " + str(d["action"]["amount"]) + " " + d["action"]["unit"] + ", topping up " + d["action"]["tops_up"]' 
echo "== 7. Nothing is left to pay"
gaf act "$VERDICT2" --kind reimburse --subject $TRIP --by finance-desk --grant "$GRANT" --policy expense-actions \
    --key trip-42-more --at 2026-08-12 || echo "   (refused, as it should be)"
