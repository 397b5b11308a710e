"""Sokoban in the DIAS paper's binary signature (Table 13)."""
