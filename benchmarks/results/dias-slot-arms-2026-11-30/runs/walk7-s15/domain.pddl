(define (domain blocksworld-3ops)
  (:requirements :strips :negative-preconditions :equality)
  (:predicates (eq ?a1 ?a2) (clear ?a1) (on-table ?a1) (on ?a1 ?a2))
  (:action move-b-to-b
    :parameters (?x3 ?x4 ?x5)
    :precondition (and (eq ?x3 ?x3) (eq ?x4 ?x4) (eq ?x5 ?x5) (clear ?x3) (clear ?x5) (on ?x5 ?x4) (not (eq ?x3 ?x4)) (not (eq ?x3 ?x5)) (not (eq ?x4 ?x3)) (not (eq ?x4 ?x5)) (not (eq ?x5 ?x3)) (not (eq ?x5 ?x4)) (not (clear ?x4)) (not (on-table ?x5)) (not (on ?x3 ?x3)) (not (on ?x3 ?x4)) (not (on ?x3 ?x5)) (not (on ?x4 ?x3)) (not (on ?x4 ?x4)) (not (on ?x4 ?x5)) (not (on ?x5 ?x3)) (not (on ?x5 ?x5)) (not (= ?x3 ?x4)) (not (= ?x3 ?x5)) (not (= ?x4 ?x5)))
    :effect (and (clear ?x4) (on ?x5 ?x3) (not (clear ?x3)) (not (on ?x5 ?x4))))
  (:action move-b-to-t
    :parameters (?x2 ?x3)
    :precondition (and (eq ?x2 ?x2) (eq ?x3 ?x3) (clear ?x2) (on ?x2 ?x3) (not (eq ?x2 ?x3)) (not (eq ?x3 ?x2)) (not (clear ?x3)) (not (on-table ?x2)) (not (on ?x2 ?x2)) (not (on ?x3 ?x2)) (not (on ?x3 ?x3)) (not (= ?x2 ?x3)))
    :effect (and (clear ?x3) (on-table ?x2) (not (on ?x2 ?x3))))
  (:action move-t-to-b
    :parameters (?x3 ?x5)
    :precondition (and (eq ?x3 ?x3) (eq ?x5 ?x5) (clear ?x3) (clear ?x5) (on-table ?x3) (not (eq ?x3 ?x5)) (not (eq ?x5 ?x3)) (not (on ?x3 ?x3)) (not (on ?x3 ?x5)) (not (on ?x5 ?x3)) (not (on ?x5 ?x5)) (not (= ?x3 ?x5)))
    :effect (and (on ?x3 ?x5) (not (clear ?x5)) (not (on-table ?x3)))))
