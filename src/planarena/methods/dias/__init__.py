"""DIAS: differentiable inference of lifted action schemas from state transitions (``../shared/papers/dias-action-schemas.txt``)."""
