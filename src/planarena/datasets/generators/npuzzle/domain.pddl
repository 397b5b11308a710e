; N-Puzzle on an n x n board (DIAS paper Table 5: move-up/3, move-down/3, move-left/3, move-right/3;
; tile/1, cell/1, at/2, blank/1, above/2, right/2). (above ?a ?b): cell ?a is directly above ?b;
; (right ?a ?b): cell ?a is directly right of ?b. A move slides tile ?t from ?from into the blank
; cell ?to, in the direction the action names.
(define (domain npuzzle)
  (:requirements :strips)
  (:predicates (tile ?t) (cell ?c) (at ?t ?c) (blank ?c) (above ?a ?b) (right ?a ?b))
  (:action move-up
    :parameters (?t ?from ?to)
    :precondition (and (tile ?t) (cell ?from) (cell ?to) (at ?t ?from) (blank ?to) (above ?to ?from))
    :effect (and (at ?t ?to) (blank ?from) (not (at ?t ?from)) (not (blank ?to))))
  (:action move-down
    :parameters (?t ?from ?to)
    :precondition (and (tile ?t) (cell ?from) (cell ?to) (at ?t ?from) (blank ?to) (above ?from ?to))
    :effect (and (at ?t ?to) (blank ?from) (not (at ?t ?from)) (not (blank ?to))))
  (:action move-left
    :parameters (?t ?from ?to)
    :precondition (and (tile ?t) (cell ?from) (cell ?to) (at ?t ?from) (blank ?to) (right ?from ?to))
    :effect (and (at ?t ?to) (blank ?from) (not (at ?t ?from)) (not (blank ?to))))
  (:action move-right
    :parameters (?t ?from ?to)
    :precondition (and (tile ?t) (cell ?from) (cell ?to) (at ?t ?from) (blank ?to) (right ?to ?from))
    :effect (and (at ?t ?to) (blank ?from) (not (at ?t ?from)) (not (blank ?to)))))
