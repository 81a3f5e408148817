// name: why-verdict
// question: Why was this verdict reached: on which accepted facts, evaluations, claims and sources, under which policy and rules versions?
// params: closure (a closure id)
// example: gaf query why-verdict --param closure=closure:aca0…
MATCH (v:Verdict)-[:DECIDES]->(c:Closure {id: $closure})-[:CLOSES]->(g:GAF)-[:CONTAINS]->(f:AcceptedFact)-[:STATES]->(p:Proposition)
MATCH (c)-[:UNDER]->(pol:Projection)
MATCH (c)-[:JUDGED_BY]->(r:VerdictRules)
OPTIONAL MATCH (f)-[:JUSTIFIED_BY]->(e:Evaluation)-[:SUPPORTED_BY]->(cl:Claim)-[:FROM_SOURCE]->(s:Source)
RETURN v.label AS verdict, pol.name AS policy, pol.version AS policy_version, r.name AS rules, r.version AS rules_version,
       p.predicate AS predicate, p.subject AS subject, f.id AS fact, e.outcome AS evaluation, cl.id AS claim, s.key AS source
ORDER BY predicate, subject, fact, claim
