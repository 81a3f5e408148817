// name: what-rests-on-source
// question: Which accepted facts and closures rest directly on claims from this source?
// params: source (a source key)
// example: gaf query what-rests-on-source --param source=bank-ledger
MATCH (s:Source {key: $source})<-[:FROM_SOURCE]-(cl:Claim)<-[:SUPPORTED_BY]-(e:Evaluation)<-[:JUSTIFIED_BY]-(f:AcceptedFact)-[:STATES]->(p:Proposition)
OPTIONAL MATCH (f)<-[:CONTAINS]-(g:GAF)<-[:CLOSES]-(c:Closure)
RETURN p.predicate AS predicate, p.subject AS subject, f.id AS fact, cl.id AS claim, c.id AS closure, c.subject AS closure_subject
ORDER BY predicate, subject, fact, closure
