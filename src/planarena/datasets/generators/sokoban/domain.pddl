; Sokoban on a grid of cells in the DIAS paper's binary encoding (Table 13: move_player/2,
; push_box/3; has_player/1, has_box/1, adjacent/2, adjacent_2/2). (adjacent ?a ?b): neighbouring
; cells; (adjacent_2 ?a ?c): ?c two cells from ?a in a straight line. Walls are cells that do not
; exist (no object, no adjacency). The paper's own files are not published: this is its signature.
(define (domain sokoban)
  (:requirements :strips :negative-preconditions)
  (:predicates (has_player ?c) (has_box ?c) (adjacent ?a ?b) (adjacent_2 ?a ?c))
  (:action move_player
    :parameters (?from ?to)
    :precondition (and (has_player ?from) (adjacent ?from ?to) (not (has_box ?to)))
    :effect (and (has_player ?to) (not (has_player ?from))))
  (:action push_box
    :parameters (?p ?b ?t)
    :precondition (and (has_player ?p) (has_box ?b) (adjacent ?p ?b) (adjacent ?b ?t) (adjacent_2 ?p ?t)
                       (not (has_box ?t)))
    :effect (and (has_player ?b) (not (has_player ?p)) (has_box ?t) (not (has_box ?b)))))
