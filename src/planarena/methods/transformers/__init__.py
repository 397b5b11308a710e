"""The symmetry-aware transformers family (Fritzsche, Gestrin, Seipp, "Symmetry-Aware Transformer
Training for Automated Planning"; docs/papers/symmetry-aware-transformers.md): PlanGPT (the
decoder-only baseline), the SATr encoder (heuristic model, greedy guidance) and encoder-decoder
(plan generation), each with and without the contrastive loss.

Modules: :mod:`.tokens` (atom-level tokens, object renamings, the decoder's action vocabulary),
:mod:`.plangpt` (PlanGPT's token sequences, type-based renaming), :mod:`.model` (the SATr encoder
and the contrastive loss), :mod:`.decoders` (the SATr encoder-decoder and PlanGPT with KV-cached
incremental decoding), :mod:`.data` (training state spaces or reference-plan chains, samples
uniform over goal distances, uniform optimal plans), :mod:`.batches` (renamed training pairs),
:mod:`.train` (the training loop, divergence detection, checkpoint selection), :mod:`.decode`
(Algorithms 1-3 in lockstep), :mod:`.guidance` (Algorithm 4) and :mod:`.method` (the registry
method ``satr``: one params block per Table 1 / Table E.4 column). ``PAPER_NOTES.md`` digests the
paper: formats, gaps and the choices made for them.
"""
