"""Sokoban-pull in the DIAS paper's binary signature (Table 14): Sokoban plus pull_box."""
