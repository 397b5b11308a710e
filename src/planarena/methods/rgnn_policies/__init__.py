"""R-GNN general policies with IW(1) / Abstracted IW(1) lookahead and the Aggregated-Delta encoding.

Source: Aichmüller, Ståhlberg, Funkquist, Geffner, "Efficient Lookahead Encoding and Abstracted
Width for Learning General Policies in Classical Planning" (docs/papers/rgnn-policies.md), and its
learned-heuristic baseline WL-GOOSE (Chen, Trevizan, Thiébaux, ICAPS 2024).
"""
