// name: relied-on-absence
// question: Which closures (and their verdicts) rest on the absence of claims, and in which closed scopes?
// params: (none)
// example: gaf query relied-on-absence
MATCH (c:Closure)-[:ASSUMES_COMPLETE]->(d:Completeness)-[:COMPLETE_SOURCE]->(s:Source)
OPTIONAL MATCH (v:Verdict)-[:DECIDES]->(c)
RETURN c.id AS closure, c.subject AS subject, v.label AS verdict, d.predicate AS predicate, d.subject AS scope_subject,
       d.object AS scope_object, s.key AS complete_source, d.id AS scope
ORDER BY closure, predicate
