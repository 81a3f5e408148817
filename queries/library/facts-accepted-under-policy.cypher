// name: facts-accepted-under-policy
// question: Which facts were accepted under this projection policy version, and how was each justified?
// params: policy (a policy name), version (a policy version, integer)
// example: gaf query facts-accepted-under-policy --param policy=rent-delinquency --param version=1
MATCH (pol:Projection {name: $policy, version: $version})<-[:UNDER]-(f:AcceptedFact)-[:STATES]->(p:Proposition)
MATCH (f)-[:JUSTIFIED_BY]->(j)
RETURN p.predicate AS predicate, p.subject AS subject, f.id AS fact, j.kind AS justified_by, j.id AS justification
ORDER BY predicate, subject, fact
