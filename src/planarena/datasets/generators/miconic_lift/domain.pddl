; Miconic as the DIAS paper encodes it (Table 11): a lift moves between floors; a person boards at
; the lift's floor and unboards at another. Actions unboard/2, board/2, move_up/2, move_down/2;
; predicates person/1, floor/1 (the types), lift_pos/1, in_lift/1, in_floor/2, above/2.
; (above ?f1 ?f2) holds when ?f2 is above ?f1 (transitive, as in the IPC 2000 domain).
(define (domain miconic-lift)
  (:requirements :strips :typing)
  (:types person floor)
  (:predicates (lift_pos ?f - floor) (in_lift ?p - person) (in_floor ?p - person ?f - floor)
               (above ?f1 - floor ?f2 - floor))
  (:action board
    :parameters (?p - person ?f - floor)
    :precondition (and (lift_pos ?f) (in_floor ?p ?f))
    :effect (and (in_lift ?p) (not (in_floor ?p ?f))))
  (:action unboard
    :parameters (?p - person ?f - floor)
    :precondition (and (lift_pos ?f) (in_lift ?p))
    :effect (and (in_floor ?p ?f) (not (in_lift ?p))))
  (:action move_up
    :parameters (?f1 - floor ?f2 - floor)
    :precondition (and (lift_pos ?f1) (above ?f1 ?f2))
    :effect (and (lift_pos ?f2) (not (lift_pos ?f1))))
  (:action move_down
    :parameters (?f1 - floor ?f2 - floor)
    :precondition (and (lift_pos ?f1) (above ?f2 ?f1))
    :effect (and (lift_pos ?f2) (not (lift_pos ?f1)))))
