"""queries: builds on gaf (see its issue); nothing here yet."""
