"""The evolutionary search over programs: the program database's rules (islands, MAP-Elites,
sampling, trends), program text (hashing, code in answers, SEARCH/REPLACE edits), the built-in
mutation operator and the surrogate that screens its steps. Pure functions, no database."""
