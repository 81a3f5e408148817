// name: superseded-closures-and-why
// question: Which closures were superseded, by which, with which verdicts, and what reopened them?
// params: (none)
// example: gaf query superseded-closures-and-why
MATCH (n:Closure)-[:SUPERSEDES]->(o:Closure)
OPTIONAL MATCH (ov:Verdict)-[:DECIDES]->(o)
OPTIONAL MATCH (nv:Verdict)-[:DECIDES]->(n)
OPTIONAL MATCH (r:Reopen)-[:REOPENS]->(o)
RETURN o.id AS superseded, ov.label AS old_verdict, n.id AS superseding, nv.label AS new_verdict, o.subject AS subject,
       r.trigger AS trigger, r.reason AS reason, n.closed_at AS at
ORDER BY at, superseded
