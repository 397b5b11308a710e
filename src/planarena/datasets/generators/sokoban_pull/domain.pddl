; Sokoban-pull (DIAS paper Table 14): Sokoban's binary encoding (../sokoban/domain.pddl) plus pull_box/3, which
; undoes a push: the player at ?p steps away from the box at ?b to ?t and the box follows onto ?p.
; The paper's own files are not published: this is its signature.
(define (domain sokoban_pull)
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
    :effect (and (has_player ?b) (not (has_player ?p)) (has_box ?t) (not (has_box ?b))))
  (:action pull_box
    :parameters (?p ?b ?t)
    :precondition (and (has_player ?p) (has_box ?b) (adjacent ?b ?p) (adjacent ?p ?t) (adjacent_2 ?b ?t)
                       (not (has_box ?t)))
    :effect (and (has_player ?t) (not (has_player ?p)) (has_box ?p) (not (has_box ?b)))))
