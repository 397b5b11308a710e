(define (domain blocksworld-3ops)
  (:requirements :strips :negative-preconditions :equality)
  (:predicates (eq ?a1 ?a2) (clear ?a1) (on-table ?a1) (on ?a1 ?a2))
  (:action move-b-to-b
    :parameters (?x2 ?x3 ?x4)
    :precondition (and (eq ?x2 ?x2) (eq ?x3 ?x3) (eq ?x4 ?x4) (clear ?x2) (clear ?x4) (on ?x4 ?x3) (not (eq ?x2 ?x3)) (not (eq ?x2 ?x4)) (not (eq ?x3 ?x2)) (not (eq ?x3 ?x4)) (not (eq ?x4 ?x2)) (not (eq ?x4 ?x3)) (not (clear ?x3)) (not (on-table ?x4)) (not (on ?x2 ?x2)) (not (on ?x2 ?x3)) (not (on ?x2 ?x4)) (not (on ?x3 ?x2)) (not (on ?x3 ?x3)) (not (on ?x3 ?x4)) (not (on ?x4 ?x2)) (not (on ?x4 ?x4)) (not (= ?x2 ?x3)) (not (= ?x2 ?x4)) (not (= ?x3 ?x4)))
    :effect (and (clear ?x3) (on ?x4 ?x2) (not (clear ?x2)) (not (on ?x4 ?x3))))
  (:action move-b-to-t
    :parameters (?x1 ?x5)
    :precondition (and (eq ?x1 ?x1) (eq ?x5 ?x5) (clear ?x5) (on ?x5 ?x1) (not (eq ?x1 ?x5)) (not (eq ?x5 ?x1)) (not (clear ?x1)) (not (on-table ?x5)) (not (on ?x1 ?x1)) (not (on ?x1 ?x5)) (not (on ?x5 ?x5)) (not (= ?x1 ?x5)))
    :effect (and (clear ?x1) (on-table ?x5) (not (on ?x5 ?x1))))
  (:action move-t-to-b
    :parameters (?x2 ?x3)
    :precondition (and (eq ?x2 ?x2) (eq ?x3 ?x3) (clear ?x2) (clear ?x3) (on-table ?x2) (not (eq ?x2 ?x3)) (not (eq ?x3 ?x2)) (not (on ?x2 ?x2)) (not (on ?x2 ?x3)) (not (on ?x3 ?x2)) (not (on ?x3 ?x3)) (not (= ?x2 ?x3)))
    :effect (and (on ?x2 ?x3) (not (clear ?x3)) (not (on-table ?x2)))))
