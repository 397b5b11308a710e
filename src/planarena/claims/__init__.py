"""Claims: each paper's claims as pre-registered experiments with verdicts computed from records
(:mod:`planarena.claims.spec`: the claim files; :mod:`planarena.claims.verdict`: gate, confirm,
refute and the verdict)."""
