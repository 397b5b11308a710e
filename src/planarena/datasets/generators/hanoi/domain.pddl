; Towers of Hanoi (the IPC 1998 encoding): (smaller ?x ?y) holds when ?y is smaller than ?x; a peg
; is larger than every disc. DIAS paper Table 9: move/3; clear/1, on/2, smaller/2.
(define (domain hanoi)
  (:requirements :strips)
  (:predicates (clear ?x) (on ?x ?y) (smaller ?x ?y))
  (:action move
    :parameters (?disc ?from ?to)
    :precondition (and (smaller ?to ?disc) (on ?disc ?from) (clear ?disc) (clear ?to))
    :effect (and (clear ?from) (on ?disc ?to) (not (on ?disc ?from)) (not (clear ?to)))))
