// name: actions-and-authorities
// question: Which actions were taken, on which verdicts, by whom, under which grant and action policy, and with which outcome?
// params: (none)
// example: gaf query actions-and-authorities
MATCH (a:Action)-[:AUTHORISED_BY]->(ag:Agent)
MATCH (a)-[:UNDER_GRANT]->(g:Grant)-[:GRANTED_BY]->(granter:Agent)
MATCH (a)-[:EXECUTES]->(v:Verdict)
MATCH (a)-[:PERMITTED_BY]->(pol:ActionPolicy)
OPTIONAL MATCH (st:ActionStatus)-[:STATUS_OF]->(a)
RETURN a.id AS action, a.action_kind AS kind, a.subject AS subject, v.label AS verdict, ag.key AS authorised_by,
       granter.key AS grant_from, pol.name AS action_policy, collect(st.status) AS statuses, a.requested_at AS requested_at
ORDER BY requested_at, action
