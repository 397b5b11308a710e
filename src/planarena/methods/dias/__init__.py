"""DIAS: differentiable inference of lifted action schemas from state transitions (Reiter, Gebler,
Geffner, "Differentiable Learning of Lifted Action Schemas for Classical Planning";
docs/papers/dias.md)."""
