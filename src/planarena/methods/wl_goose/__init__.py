"""WL-GOOSE (Chen, Trevizan, Thiébaux, ICAPS 2024): a linear heuristic on ILG WL features followed by
greedy best-first search. The learned-heuristic baseline the R-GNN policy papers compare with; a
``search`` row of its own family, not one of the policies."""
