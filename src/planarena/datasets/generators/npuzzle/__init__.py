"""N-Puzzle in the DIAS paper's signature (Table 5)."""
