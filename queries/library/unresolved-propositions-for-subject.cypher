// name: unresolved-propositions-for-subject
// question: Which propositions about this subject did a GAF leave unresolved, and in which closures?
// params: subject (a subject, e.g. payment:tx-4471)
// example: gaf query unresolved-propositions-for-subject --param subject=payment:tx-4471
MATCH (g:GAF)-[:LEAVES_UNRESOLVED]->(p:Proposition {subject: $subject})
OPTIONAL MATCH (c:Closure)-[:CLOSES]->(g)
RETURN p.predicate AS predicate, p.subject AS subject, p.id AS proposition, g.id AS gaf, c.id AS closure
ORDER BY predicate, closure
