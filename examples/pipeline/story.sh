#!/bin/sh
# A dbt pipeline on DuckDB reports to gaf through OpenLineage, a decision rests on its tests,
# a corrected seed makes a test fail, and gaf names the decision to reopen and re-decides it.
# Needs the pipeline tools: python scripts/pipeline_env.py fetch (dbt-core, dbt-duckdb,
# openlineage-dbt in a venv of their own). Runs in $WORK (default: a new temporary directory),
# on the embedded store there unless GAF_STORE names another (Neo4j: with GAF_TOKENS set).
set -e
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
command -v gaf > /dev/null 2>&1 || gaf() { python -m gaf "$@"; }
TOOLS="$(python "$ROOT/scripts/pipeline_env.py" path)"
export PATH="$PATH:$TOOLS"   # dbt-ol runs dbt from PATH; gaf's python stays first
WORK="${WORK:-$(mktemp -d)}"
export GAF_STORE="${GAF_STORE:-$WORK/store.lbug}"
field() { python -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }
REPORT=assertion:duckdb://shop.duckdb/shop.main.revenue_report/total/positive

echo "== 1. A store, the data steward, and gaf serve with a writer token for the OpenLineage client"
gaf init > /dev/null
gaf ingest "$HERE/people.yaml" > /dev/null
SECRET=$(gaf token create --agent data-steward --role writer --json | field 'd["secret"]')
# gaf serve in the background, logging to $1, waited for until it answers on $PORT.
serve() {
    gaf serve --port "$PORT" > "$1" 2>&1 &
    SERVER=$!
    python -c "
import socket, sys, time
for _ in range(200):
    try:
        socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=0.2).close()
        break
    except OSError:
        time.sleep(0.05)" "$PORT"
}
PORT=$(python -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
serve "$WORK/serve.log"
trap 'kill $SERVER 2> /dev/null || true' EXIT
# The OpenLineage client's HTTP transport, posting to gaf's endpoint with the token as its api_key.
export OPENLINEAGE__TRANSPORT__TYPE=http OPENLINEAGE__TRANSPORT__URL="http://127.0.0.1:$PORT" \
       OPENLINEAGE__TRANSPORT__ENDPOINT=api/v1/lineage OPENLINEAGE__TRANSPORT__AUTH__TYPE=api_key \
       OPENLINEAGE__TRANSPORT__AUTH__API_KEY="$SECRET"
mkdir -p "$WORK/shop" && cp -r "$HERE/shop/." "$WORK/shop/"
cd "$WORK/shop"

echo "== 2. dbt-ol build: seed, three models, their tests; the events go to gaf serve"
"$TOOLS/dbt-ol" build --profiles-dir . --project-dir . > "$WORK/dbt-1.log" 2>&1
cp target/run_results.json "$WORK/run_results-1.json" && cp target/manifest.json "$WORK/manifest.json"
grep -E "Done\. PASS" "$WORK/dbt-1.log" | sed 's/^.*Done/   dbt: Done/'
kill $SERVER && wait $SERVER 2> /dev/null || true   # the CLI writes next: the server lets go of the store

echo "== 3. The policy trusts the report's dbt tests; project and close: the report may be published"
gaf policy add "$HERE/policy.yaml" > /dev/null
gaf rules add "$HERE/rules.yaml" > /dev/null
NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)
GAF1=$(gaf project publish-revenue-report@1 --reviewer data-steward --as-of "$NOW" --json | field 'd["gaf"]')
CLOSURE1=$(gaf close "$GAF1" --rules publish-revenue-report --subject "$REPORT" --as-of "$NOW" --json | field 'd["closure"]')
gaf verdict "$CLOSURE1" --json | field '"   verdict: " + d["label"]'

echo "== 4. The seed is corrected (a large refund); dbt-ol build again: the report's positive test fails"
serve "$WORK/serve-2.log"
cp "$HERE/corrected/orders.csv" seeds/orders.csv
"$TOOLS/dbt-ol" build --profiles-dir . --project-dir . > "$WORK/dbt-2.log" 2>&1 || true   # a failed test fails the build
cp target/run_results.json "$WORK/run_results-2.json"
grep -E "Done\. PASS" "$WORK/dbt-2.log" | sed 's/^.*Done/   dbt: Done/'
kill $SERVER && wait $SERVER 2> /dev/null || true

echo "== 5. The first build's revenue model run was rewritten by the re-run: what rests on it?"
RUN=$(gaf query --cypher "MATCH (c:Claim)-[:ASSERTS]->(p:Proposition {predicate: 'of_job'}) WHERE p.object = 'job:dbt/shop.main.shop.revenue_report.build.run' RETURN p.subject AS run, min(c.observed_at) AS began ORDER BY began LIMIT 1" --json | field 'd[0]["run"]')
gaf impact run "$RUN" --quiet
echo "== 6. Reopen it: the run's reports and the test run downstream count for nothing; the report is held"
gaf reopen run "$RUN" --by data-steward --reason "the orders seed was corrected" --reviewer data-steward --quiet
gaf history "$REPORT"
