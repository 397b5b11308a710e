"""R-GNN general policies with IW(1) / Abstracted IW(1) lookahead and the Aggregated-Delta encoding.

Source: ``../shared/papers/aiw-ad-rgnn-policies.txt`` (Aichmüller, Ståhlberg, Funkquist, Geffner,
"Efficient Lookahead Encoding and Abstracted Width for Learning General Policies in Classical
Planning"), and its learned-heuristic baseline WL-GOOSE (Chen, Trevizan, Thiébaux, ICAPS 2024).
"""
