// name: derivations-relying-on-absence
// question: Which derivations concluded something from the absence of claims in a closed scope?
// params: (none)
// example: gaf query derivations-relying-on-absence
MATCH (dv:Derivation)-[:RELIED_ON_ABSENCE]->(d:Completeness)
MATCH (dv)-[:CONCLUDES]->(p:Proposition)
RETURN dv.rule AS rule, p.predicate AS predicate, p.subject AS subject, d.predicate AS absent_predicate, d.id AS scope, dv.id AS derivation
ORDER BY rule, subject
