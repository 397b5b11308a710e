"""The symmetry-aware transformers family (``../shared/papers/symmetry-aware-transformers.txt``):
PlanGPT (the decoder-only baseline), the SATr encoder (heuristic model, greedy guidance) and
encoder-decoder (plan generation), each with and without the contrastive loss.

Modules: :mod:`.tokens` (atom-level tokens and object renamings), :mod:`.model` (the SATr
encoder and the contrastive loss), :mod:`.data` (training state spaces, samples uniform over goal
distances), :mod:`.train` (the training loop, divergence detection, checkpoint selection),
:mod:`.method` (the registry rows ``satr_encoder_cl`` / ``satr_encoder_nocl``: greedy heuristic
guidance, Algorithm 4), :mod:`.plangpt` (PlanGPT's token sequences; its model is still to come).
``PAPER_NOTES.md`` digests the paper for the rest of the family.
"""
