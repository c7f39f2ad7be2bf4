/*
 * cmd_simulate.h - what the files of `gpuplan simulate` share: the
 * interruptions of a run and the answer's table (cmd_simulate_report.c).
 * cmd_simulate.c, the command itself, calls them; they do not call it.
 */
#ifndef GPUPLAN_CMD_SIMULATE_H
#define GPUPLAN_CMD_SIMULATE_H

#include "plan.h"
#include "sim.h"

/* Fills p->interrupts with what a run of p's steps (p->time_to_train_s) on
 * gpus GPUs expects, and ip with the model's figures (plan_interrupt_model):
 * at the rates, restart time and checkpoint bandwidth p's plan file states,
 * else the planner's defaults, at p's checkpoint interval when it states
 * one, else Young/Daly's.  Leaves them unstated without tokens, and returns
 * -1 when they would waste more than half the run (the planner drops such
 * a plan); 0 otherwise. */
int simulate_fill_interrupts(struct sim_plan *p, int gpus, struct plan_interrupt *ip);

/* Prints one part of a step: "  name   time  share%" of step. */
void simulate_print_part(const char *name, double s, double step);

/* Prints p's prediction for people, with the interruptions ip (from
 * simulate_fill_interrupts); planned_s, planned_usd: what the plan file
 * answered for the whole run (0: none), printed where it differs from
 * these steps' time. */
void simulate_print_table(const struct sim_plan *p, const struct plan_interrupt *ip,
			  double planned_s, double planned_usd);

#endif
